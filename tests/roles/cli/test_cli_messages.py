"""What the command line says: a Redis URL masked the same way in every message, ids checked as they are
parsed (a blank `--user` is a usage error), and no warning a user can do nothing about."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from brain.errors import InputError
from brain.keys import check_id
from brain.logs import RedactingFilter, redact
from brain.settings import mask_url
from roles.cli.args import AGENT_ID, CHAT_ID, USER_ID
from roles.cli.main import main
from roles.cli.parser import build_parser
from tests.roles.cli.test_chat import env_for
from tests.roles.cli.test_cli import brain
from tests.support.openai_server import Chat, ScriptedOpenAIServer
from tests.support.servers import free_port

# ---------------------------------------------------------------- one masked form of a URL


@pytest.fixture
def in_process(capsys: pytest.CaptureFixture[str]) -> Iterator[Callable[..., tuple[int, str, str]]]:
    """`brain ARGS` run by `main` in this process: (exit status, stdout, stderr). The logging handler each
    run adds is taken away afterwards."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level

    def run(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
        status = main(list(args), environ=env)
        out, err = capsys.readouterr()
        return status, out, err

    yield run
    for handler in [h for h in root.handlers if h not in handlers]:
        root.removeHandler(handler)
    root.setLevel(level)


@pytest.mark.parametrize(
    ("url", "masked"),
    [
        ("valkey://app:pw-SECRET-1@127.0.0.1:{port}/0", "valkey://app:***@127.0.0.1:{port}/0"),
        ("redis://:p@ss-SECRET-2@127.0.0.1:{port}/0", "redis://:***@127.0.0.1:{port}/0"),
    ],
)
def test_a_redis_url_reads_the_same_in_every_message(
    url: str, masked: str, tmp_path: Path, in_process: Callable[..., tuple[int, str, str]]
) -> None:
    port = free_port()
    url, masked = url.format(port=port), masked.format(port=port)
    assert mask_url(url) == masked
    env = {"BRAIN_REDIS_URL": url, "HOME": str(tmp_path)}
    fast = ["--set", "redis.retries=0", "--set", "redis.connect_timeout=1"]
    _, show, _ = in_process("config", "show", env=env)
    _, check, _ = in_process("config", "check", *fast, env=env)
    down, _, error = in_process("memory", "export", "--user", "a", "--chat", "b", *fast, env=env)
    deploy = tmp_path / "d.yaml"
    deploy.write_text("roles:\n  - {name: W, actions: [{name: A, instruction: x}]}\n")
    _, plan, _ = in_process("run", str(deploy), "--dry-run", env=env)
    assert f"redis.url = {masked}  # env:BRAIN_REDIS_URL" in show.splitlines()
    assert f"FAIL  redis: cannot reach Redis at {masked}: " in check
    assert down == 2 and error.startswith(f"brain: error: cannot reach Redis at {masked}: ")
    assert f"redis: {masked}" in plan.splitlines()
    assert "SECRET" not in show + check + error + plan


def test_logs_and_errors_mask_a_url_as_mask_url_does(caplog: pytest.LogCaptureFixture) -> None:
    url = "redis://app:pw-SECRET@db:6379/0"
    assert redact(f"lost {url}: reset", [url]) == f"lost {mask_url(url)}: reset"  # not **********
    assert redact(f"lost {url}") == "lost redis://app:***@db:6379/0"
    assert redact("at redis://:a@b-SECRET@db:1/0 now") == "at redis://:***@db:1/0 now"  # an @ in the password
    assert (
        redact("key sk-SECRET-9 and redis://db:6379", ["sk-SECRET-9"]) == "key ********** and redis://db:6379"
    )
    logger = logging.getLogger("brain.test.mask")
    logger.addFilter(RedactingFilter([url, "pw-SECRET"]))
    with caplog.at_level(logging.INFO, logger="brain.test.mask"):
        logger.info("connecting to %s", url)
    assert caplog.messages == ["connecting to redis://app:***@db:6379/0"]


def test_an_llm_url_with_a_password_is_masked_too(
    tmp_path: Path, in_process: Callable[..., tuple[int, str, str]]
) -> None:
    env = {"OPENAI_BASE_URL": "https://me:tok-SECRET@llm.example/v1", "HOME": str(tmp_path)}
    _, show, _ = in_process("config", "show", env=env)
    assert "llm.base_url = https://me:***@llm.example/v1  # env:OPENAI_BASE_URL" in show
    deploy = tmp_path / "d.yaml"
    deploy.write_text("roles:\n  - {name: W, actions: [{name: A, instruction: x}]}\n")
    _, plan, _ = in_process("run", str(deploy), "--dry-run", env=env)
    assert "llm default: gpt-4o-mini at https://me:***@llm.example/v1" in plan
    assert "SECRET" not in show + plan


# ---------------------------------------------------------------- ids from the command line


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "user id must not be blank"),
        ("   ", "user id must not be blank"),
        (" alice", "user id must not start or end with whitespace"),
        ("a/b", "user id must be at most 256 characters and hold no '/'"),
        ("x" * 257, "user id must be at most 256 characters"),
        ("lone \ud800", "user id must not hold control or invisible characters or lone surrogates"),
        ("alice\n", "user id must not start or end with whitespace"),
        ("al\x1bice", "user id must not hold control or invisible characters"),
        ("al\u200bice", "user id must not hold control or invisible characters"),
    ],
)
def test_check_id_refuses_what_a_person_cannot_have_meant(value: str, message: str) -> None:
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        check_id(value, "user id")


def test_check_id_keeps_real_ids() -> None:
    for value in ("alice", "Ann Lee", "张伟", "o'brien", "a.b-c_d@example.com"):
        assert check_id(value) == value


def _options(parser: argparse.ArgumentParser, path: str = "brain") -> list[tuple[str, argparse.Action]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _options(sub, f"{path} {name}")
        elif set(action.option_strings) & {"--user", "--chat", "--agent"}:
            found.append((path, action))
    return found


def test_every_id_option_of_every_command_is_checked() -> None:
    options = _options(build_parser())
    commands = {path for path, _ in options}
    assert {
        "brain chat",
        "brain memory export",
        "brain memory facts",
        "brain mcp",
        "brain keys create",
    } <= commands
    kinds = {"--user": USER_ID, "--chat": CHAT_ID, "--agent": AGENT_ID}
    wrong = [
        f"{path} {a.option_strings[0]}" for path, a in options if a.type is not kinds[a.option_strings[0]]
    ]
    assert wrong == []


@pytest.mark.parametrize(
    "args",
    [
        ["chat", "--user", ""],
        ["chat", "--chat", "  "],
        ["memory", "export", "--user", "", "--chat", "c"],
        ["memory", "delete", "--user", " ", "--yes"],
        ["memory", "facts", "--user", ""],
        ["memory", "graph", "--user", "\t"],
        ["memory", "load", "notes.md", "--user", ""],
        ["agent", "import", "a.json", "--chat", ""],
        ["mcp", "--agent", ""],
        ["keys", "create", "--user", ""],
        ["keys", "list", "--user", " bob"],
    ],
)
def test_a_bad_id_is_a_usage_error(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(args, environ={})
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "error: argument --" in err and ("must not be" in err or "must not start" in err)


def test_brain_chat_with_a_blank_user_stops_before_anything_starts(
    openai_server: ScriptedOpenAIServer,
) -> None:
    result = brain("chat", "--user", "", env=env_for(openai_server), stdin="hi\n")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines()[-1] == "brain chat: error: argument --user: user id must not be blank"
    assert openai_server.requests == []


# ---------------------------------------------------------------- no warning nobody can act on


def test_a_model_tiktoken_does_not_know_starts_without_a_warning(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Chat("Hi."))
    result = brain("chat", "--set", "llm.model=llama3.1", env=env_for(openai_server), stdin="hello\n")
    assert result.returncode == 0 and result.stdout == "Hi.\n"
    assert result.stderr == ""
