"""A slash command that fails prints one line and the chat goes on: a file that cannot be written or read, a
broken export, a bad argument, the store, any exception of a command handler."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest

from brain import InMemoryStore
from brain.testing import ScriptedLLM
from roles.assistant import Assistant
from roles.cli import commands
from roles.cli.session import ChatSession
from tests.roles.cli.test_chat import brain, env_for
from tests.support.openai_server import Chat, ScriptedOpenAIServer
from tests.support.runtime import make_runtime


def session(*replies: str, store: InMemoryStore | None = None) -> tuple[ChatSession, StringIO, StringIO]:
    assistant = Assistant(make_runtime(ScriptedLLM(list(replies)), store=store or InMemoryStore()))
    out, status = StringIO(), StringIO()
    return ChatSession(assistant, "u", "c", out, confirm=lambda _: True, status=status), out, status


def error_lines(out: StringIO) -> list[str]:
    return [line for line in out.getvalue().splitlines() if line.startswith("error:")]


async def test_export_to_a_missing_directory_keeps_the_session(tmp_path: Path) -> None:
    s, out, _ = session("Hello!", "Still here.")
    assert await s.handle("hi")
    target = tmp_path / "no" / "such" / "dir" / "chat.json"
    assert await s.handle(f"/export {target}")
    assert error_lines(out) == [f"error: /export: cannot write {target}: No such file or directory"]
    assert await s.handle("are you still with me?")  # the session goes on
    assert out.getvalue().endswith("Still here.\n") and not s.failed
    assert await s.handle(f"/export {tmp_path}")  # a directory, not a file
    assert error_lines(out)[-1] == f"error: /export: cannot write {tmp_path}: Is a directory"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read {file}: No such file or directory"),
        (b"\xff\xfe not text", "{file} is not UTF-8 text: not a conversation export"),
        (b"{not json", "not a brain-assistant conversation export: file: Invalid JSON"),
        (b"{}", "not a brain-assistant conversation export: user_id: Field required"),
        (
            b'{"format": "brain-assistant.conversation", "version": 9, "user_id": "u", "chat_id": "c"}',
            "unsupported export 'brain-assistant.conversation' version 9",
        ),
    ],
)
async def test_import_of_a_missing_or_broken_file_keeps_the_session(
    content: bytes | None, message: str, tmp_path: Path
) -> None:
    file = tmp_path / "chat.json"
    if content is not None:
        file.write_bytes(content)
    s, out, _ = session("Hello!")
    assert await s.handle(f"/import {file}")
    [line] = error_lines(out)
    assert line.startswith("error: /import: ") and message.format(file=file) in line
    assert await s.handle("hi")
    assert out.getvalue().endswith("Hello!\n") and not s.failed


async def test_import_into_a_chat_with_turns_is_one_line_not_a_failed_turn(tmp_path: Path) -> None:
    s, out, status = session("Hello!")
    await s.handle("hi")
    await s.handle(f"/export {tmp_path / 'chat.json'}")
    assert await s.handle(f"/import {tmp_path / 'chat.json'}")
    assert error_lines(out) == ["error: /import: 'u'/'c' already has a conversation; delete it first"]
    assert not s.failed and "/retry" not in status.getvalue()  # nothing of the user's is pending


@pytest.mark.parametrize("line", ["/pop x", "/pop -1", "/dump ten", "/pop ２"])
async def test_a_bad_number_is_refused_and_nothing_is_taken_back(line: str) -> None:
    s, out, _ = session("Hello!")
    await s.handle("hi")
    assert await s.handle(line)
    command, _, arg = line.partition(" ")
    what = {"/pop": "exchanges", "/dump": "messages"}[command]
    assert error_lines(out) == [f"error: {command}: {arg!r} is not a number of {what}; usage: {command} [n]"]
    memory = await s.assistant.memory_of("u", "c")
    assert len(memory.history) == 2  # /pop x used to take back one turn


async def test_any_exception_of_a_handler_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(s: ChatSession, arg: str) -> bool:
        raise RuntimeError(f"something broke\nwhile doing {arg}")

    async def no_space(s: ChatSession, arg: str) -> bool:
        raise OSError(28, "No space left on device", "/tmp/x")

    monkeypatch.setitem(commands.COMMANDS, "/broken", broken)
    monkeypatch.setitem(commands.COMMANDS, "/full", no_space)
    s, out, _ = session("Hello!")
    assert await s.handle("/broken it")
    assert await s.handle("/full")
    assert error_lines(out) == [
        "error: /broken: RuntimeError: something broke; while doing it",
        "error: /full: /tmp/x: No space left on device",
    ]
    assert await s.handle("hi") and out.getvalue().endswith("Hello!\n")
    assert not await s.handle("/exit")


async def test_a_store_failure_in_a_command_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from brain.errors import StoreError

    s, out, status = session()

    async def down(*_: object, **__: object) -> None:
        raise StoreError("cannot reach Redis at redis://:***@db:6379/0: Connection refused")

    monkeypatch.setattr(s.assistant, "summarize_now", down)
    assert await s.handle("/summarize")
    assert error_lines(out) == [
        "error: /summarize: cannot reach Redis at redis://:***@db:6379/0: Connection refused"
    ]
    assert not s.failed and status.getvalue() == ""


def test_brain_chat_survives_a_failed_export(openai_server: ScriptedOpenAIServer, tmp_path: Path) -> None:
    openai_server.script(Chat("Hello!"), Chat("Still here."))
    target = tmp_path / "missing" / "chat.json"
    lines = ["hi", f"/export {target}", f"/import {tmp_path / 'nothing.json'}", "/pop x", "still with me?"]
    result = brain("chat", env=env_for(openai_server), stdin="\n".join(lines) + "\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "Hello!",
        f"error: /export: cannot write {target}: No such file or directory",
        f"error: /import: cannot read {tmp_path / 'nothing.json'}: No such file or directory",
        "error: /pop: 'x' is not a number of exchanges; usage: /pop [n]",
        "Still here.",
    ]
    assert "Traceback" not in result.stderr and "unexpected" not in result.stderr
