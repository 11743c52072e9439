"""The installed `brain` console script, run as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from brain import __version__
from brain.loader import load_settings
from roles.cli.dispatch import NO_LLM_MESSAGE, chat_settings
from tests.support.openai_server import Models, ScriptedOpenAIServer
from tests.support.servers import free_port

BRAIN = str(Path(sys.executable).parent / "brain")


def brain(*args: str, env: dict[str, str] | None = None, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [BRAIN, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def test_version() -> None:
    result = brain("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"brain-assistant {__version__}"


def test_chat_without_llm_exits_2_with_one_sentence() -> None:
    result = brain("chat")
    assert result.returncode == 2
    assert result.stderr == NO_LLM_MESSAGE + "\n"
    assert "http://localhost:11434/v1" in result.stderr and "OPENAI_API_KEY" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_config_show_masks_secrets_and_names_sources(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("redis:\n  url: redis://app:pw-SECRET-1@db:6379/0\nllm:\n  timeout: 9\n")
    result = brain(
        "config",
        "show",
        "--config",
        str(config),
        "--set",
        "llm.max_retries=5",
        env={"OPENAI_API_KEY": "sk-SECRET-2"},
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "pw-SECRET-1" not in out and "sk-SECRET-2" not in out
    assert f"redis.url = redis://app:***@db:6379/0  # file {config}" in out
    assert "llm.api_key = **********  # env:OPENAI_API_KEY" in out
    assert "llm.max_retries = 5  # argument" in out
    assert f"llm.timeout = 9.0  # file {config}" in out
    assert "llm.model = gpt-4o-mini  # default" in out


def test_config_check_all_ok(openai_server: ScriptedOpenAIServer, redis_server_url: str) -> None:
    openai_server.script(Models(("gpt-4o-mini", "other")))
    result = brain(
        "config",
        "check",
        "--set",
        "log.level=DEBUG",
        env={
            "OPENAI_BASE_URL": openai_server.url,
            "OPENAI_API_KEY": "sk-SECRET-3",
            "BRAIN_REDIS_URL": redis_server_url,
        },
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok    settings: valid" in result.stdout
    assert "ok    redis: redis://127.0.0.1" in result.stdout
    assert f"ok    llm: {openai_server.url} answers (2 models)" in result.stdout
    assert "DEBUG" in result.stderr  # logging was on, yet the key never shows
    assert "sk-SECRET-3" not in result.stdout + result.stderr


def test_config_check_embedded_redis_and_failures(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    result = brain("config", "check", "--set", "llm.max_retries=0", env={"OPENAI_BASE_URL": dead})
    assert result.returncode == 1
    assert "ok    redis: embedded Valkey in" in result.stdout
    assert f"FAIL  llm: cannot reach {dead}" in result.stdout
    result = brain(
        "config",
        "check",
        "--set",
        "redis.retries=0",
        env={"BRAIN_REDIS_URL": f"redis://:pw-SECRET-4@127.0.0.1:{free_port()}/0"},
    )
    assert result.returncode == 1
    assert "FAIL  redis: cannot reach Redis at redis://:***@127.0.0.1" in result.stdout
    assert "FAIL  llm: not configured" in result.stdout
    assert "pw-SECRET-4" not in result.stdout + result.stderr


def test_errors_are_one_line_and_nonzero(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("llm:\n  model: [oops\n")
    for args in (
        ["config", "show", "--config", str(broken)],
        ["config", "show", "--config", str(tmp_path / "missing.yaml")],
        ["config", "show", "--set", "nonsense"],
        ["chat", "--set", "llm.timeout=-1"],
    ):
        result = brain(*args)
        assert result.returncode == 2, args
        assert result.stderr.startswith("brain: config error: ") and result.stderr.count("\n") == 1, (
            result.stderr
        )
        assert "Traceback" not in result.stderr


def test_chat_llm_failure_is_one_line(openai_server: ScriptedOpenAIServer) -> None:
    from tests.support.openai_server import Fault

    openai_server.script(Fault(401, message="bad key"))
    result = brain("chat", env={"OPENAI_BASE_URL": openai_server.url, "OPENAI_API_KEY": "sk-x"}, stdin="hi\n")
    assert result.returncode == 1  # the session survived the failed turn; input ended with it unanswered
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: gpt-4o-mini: HTTP 401 from the LLM endpoint: Error code: 401 - bad key"]
    assert "(your message is kept: /retry sends it again)" in result.stderr
    assert result.stdout == "" and "Traceback" not in result.stderr


def test_errors_never_print_secrets() -> None:
    env = {"BRAIN_REDIS_URL": "redis://user:pw-SECRET-1@127.0.0.1:1/0", "OPENAI_API_KEY": "sk-SECRET-2"}
    dead = brain("memory", "export", "--user", "a", "--chat", "b", env=env)
    assert dead.returncode == 2 and "cannot reach Redis at redis://user:***@127.0.0.1:1/0" in dead.stderr
    bad = brain("config", "show", "--set", "llm.api_key=[sk-SECRET-3]", env=env)
    assert bad.returncode == 2 and "llm.api_key" in bad.stderr
    shown = brain("config", "show", env=env)
    for result in (dead, bad, shown):
        assert "SECRET" not in result.stdout + result.stderr


@pytest.mark.parametrize("command", [["serve", "--port", "0"], ["worker", "--once"], ["chat"]])
def test_with_redis_unreachable_a_command_says_so_in_one_line_and_exits_2(command: list[str]) -> None:
    env = {
        "BRAIN_REDIS_URL": "redis://127.0.0.1:1/0",
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
    }
    result = brain(*command, env=env)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("brain: error: cannot reach Redis at redis://127.0.0.1:1/0")
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_brain_chat_runs_the_embedded_model_with_two_slots_unless_told(tmp_path: Path) -> None:
    assert chat_settings(load_settings(environ={"HOME": str(tmp_path)})).local.parallel == 2
    config = tmp_path / "brain.yaml"
    config.write_text("local:\n  parallel: 4\n")
    chosen = load_settings(config, environ={"HOME": str(tmp_path)})
    assert chat_settings(chosen) is chosen and chosen.local.parallel == 4  # the user's own choice stands
    assert load_settings(environ={"HOME": str(tmp_path)}).local.parallel == 4  # serve, mcp: the default
