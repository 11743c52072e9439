"""The Dockerfile and compose.yaml name real things: `brain` commands the CLI parses, settings and environment
variables the loader reads, a health check that passes on a serving process and fails when its store is
away. No container runtime is needed: the image's commands run here, in this venv."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from brain.loader import ENV_VARS
from roles.cli.parser import build_parser
from tests.support.openai_server import ScriptedOpenAIServer
from tests.support.servers import RedisServerProcess

ROOT = Path(__file__).resolve().parents[1]
BRAIN = str(Path(sys.executable).parent / "brain")


def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile, continuation lines joined, comments dropped. Pure."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    joined = re.sub(r"\s*\\\n\s*", " ", "\n".join(lines))
    return [
        (word.upper(), rest.strip())
        for word, _, rest in (line.strip().partition(" ") for line in joined.splitlines())
        if word
    ]


def compose_value(value: str, environ: dict[str, str]) -> str:
    """Compose's `${VAR:-default}` interpolation of one value. Pure."""
    filled = re.sub(r"\$\{(\w+):-([^}]*)\}", lambda m: environ.get(m.group(1)) or m.group(2), value)
    return filled.replace("$$", "$")


def test_dockerfile_instructions_join_continuations_and_drop_comments() -> None:
    text = '# a comment\nFROM x AS y\nRUN a \\\n  && b\n  # inside\nCMD ["c"]\n'
    assert dockerfile_instructions(text) == [("FROM", "x AS y"), ("RUN", "a && b"), ("CMD", '["c"]')]
    assert compose_value("${A:-1}/${B:-}", {"A": "x"}) == "x/"


DOCKERFILE = dockerfile_instructions((ROOT / "Dockerfile").read_text(encoding="utf-8"))
COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))


def _last(instruction: str) -> str:
    return [rest for word, rest in DOCKERFILE if word == instruction][-1]


def image_command() -> list[str]:
    """ENTRYPOINT + CMD of the image (exec form)."""
    return [*json.loads(_last("ENTRYPOINT")), *json.loads(_last("CMD"))]


def healthcheck() -> list[str]:
    """The HEALTHCHECK's command (exec form, after its options)."""
    return list(json.loads(_last("HEALTHCHECK").split(" CMD ", 1)[1]))


def test_the_image_serves_on_every_interface_as_a_user() -> None:
    command = image_command()
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert command[0] in scripts  # the wheel's console script
    args = build_parser().parse_args(command[1:])
    assert (args.command, args.host) == ("serve", "0.0.0.0")
    assert _last("EXPOSE") == str(args.port)
    assert _last("USER") not in {"root", "0"}
    assert [rest for word, rest in DOCKERFILE if word == "FROM"][-1].startswith("python:")
    url = urlsplit(next(a for a in healthcheck() if "http://" in a).split("'")[1])
    assert (url.port, url.path) == (args.port, "/readyz")


def test_brain_serve_help_answers() -> None:
    command = image_command()
    done = subprocess.run([BRAIN, *command[1:2], "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "--host" in done.stdout and "--port" in done.stdout


def test_compose_runs_serve_and_a_worker_on_valkey() -> None:
    services = COMPOSE["services"]
    assert set(services) == {"valkey", "serve", "worker"}
    serve, worker, valkey = services["serve"], services["worker"], services["valkey"]
    assert serve["command"][: len(image_command()) - 1] == image_command()[1:]  # the image's CMD, and more
    parsed = [build_parser().parse_args(s["command"]) for s in (serve, worker)]
    assert [p.command for p in parsed] == ["serve", "worker"] and parsed[1].worker_command is None
    assert serve["ports"] == [f"{parsed[0].port}:{parsed[0].port}"]
    assert serve["image"] == worker["image"] and serve["build"] == worker["build"] == "."
    assert valkey["image"].startswith("valkey/valkey:") and "healthcheck" in valkey
    for service in (serve, worker):
        assert service["depends_on"]["valkey"] == {"condition": "service_healthy"}
        assert set(service["environment"]) <= {*ENV_VARS, "BRAIN_CONFIG"}
        redis_url = urlsplit(service["environment"]["BRAIN_REDIS_URL"])
        assert (redis_url.hostname, redis_url.port) == ("valkey", 6379)


@pytest.mark.parametrize("service", ["serve", "worker"])
def test_compose_settings_take_effect(service: str) -> None:
    """`brain config show` with a service's environment and --set arguments: each one lands where meant."""
    spec = COMPOSE["services"][service]
    env = {k: compose_value(v, {}) for k, v in spec["environment"].items()}
    sets = [a for flag, a in zip(spec["command"], spec["command"][1:], strict=False) if flag == "--set"]
    done = subprocess.run(
        [BRAIN, "config", "show", *(f"--set={s}" for s in sets)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
    )
    assert done.returncode == 0, done.stderr
    assert "redis.url = redis://valkey:6379/0  # env:BRAIN_REDIS_URL" in done.stdout
    for item in sets:
        key, _, value = item.partition("=")
        assert f"{key} = {value}  # argument" in done.stdout
    assert sets == (["memory.facts.in_process_worker=false"] if service == "serve" else [])


def test_the_served_image_command_passes_its_healthcheck_and_stops_on_sigterm(
    tmp_path: Path, openai_server: ScriptedOpenAIServer
) -> None:
    """compose's serve command (the image's CMD and more) on loopback, a free port: the image's health check
    passes, fails once its Redis is gone, and SIGTERM (`docker stop`) ends it with status 0."""
    redis_server = RedisServerProcess(tmp_path / "redis")
    redis_server.start()
    command = [a if a != "0.0.0.0" else "127.0.0.1" for a in COMPOSE["services"]["serve"]["command"]]
    command[command.index("--port") + 1] = "0"
    env = {
        **os.environ,
        "BRAIN_REDIS_URL": redis_server.url,
        "OPENAI_BASE_URL": openai_server.url,
        "OPENAI_API_KEY": "sk-test",
    }
    process = subprocess.Popen(
        [BRAIN, *command], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("brain serve: http://127.0.0.1:"), line
        port = urlsplit(line.split()[2]).port
        check = [sys.executable if a == "python" else a for a in healthcheck()]
        check = [a.replace("127.0.0.1:8080", f"127.0.0.1:{port}") for a in check]
        ready = subprocess.run(check, capture_output=True, text=True, timeout=30)
        assert ready.returncode == 0, f"{shlex.join(check)}: {ready.stderr}"
        redis_server.stop()
        gone = subprocess.run(check, capture_output=True, text=True, timeout=30)
        assert gone.returncode != 0 and "503" in gone.stderr
    finally:
        redis_server.stop()
        process.send_signal(signal.SIGTERM)
        _, errors = process.communicate(timeout=30)
    assert process.returncode == 0 and "Traceback" not in errors, errors
    assert "brain serve: stopped" in errors
