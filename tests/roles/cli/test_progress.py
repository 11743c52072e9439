"""The CLI's progress renderer: one bar line redrawn in place on a terminal, log lines otherwise; never
anything on stdout."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from brain.memory.transfer import ConversationExport, ExportedTurn
from brain.message import Message
from brain.progress import PROGRESS_LOGGER, ProgressEvent
from brain.testing import ScriptedLLM
from roles.cli.progress import TerminalBar, bar_line, progress_to
from roles.cli.session import ChatSession
from roles.tiered import TieredAssistant
from tests.support.runtime import make_runtime


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def event(done: int, total: int = 1_000, task: str = "importing") -> ProgressEvent:
    return ProgressEvent(task=task, done=done, total=total, unit="turns")


def test_bar_line_shows_bar_percentage_counts_rate_and_time_left() -> None:
    assert bar_line(event(250), elapsed=5.0, width=8) == (
        "importing [##------]  25% 250/1000 turns 50.0/s ETA 0:15"
    )
    assert bar_line(event(0), elapsed=0.0, width=4) == "importing [----]   0% 0/1000 turns 0.0/s ETA --:--"
    assert bar_line(event(1_000), elapsed=3_725.0, width=4).endswith("100% 1000/1000 turns 0.3/s in 1:02:05")
    fast = bar_line(event(600, total=1_200, task="importing 'ann'/'c'"), elapsed=0.03, columns=80)
    assert fast == "importing 'ann'/'c' [###########-----------]  50% 600/1200 turns 20k/s ETA 0:00"
    assert len(fast) == 79  # the bar narrowed to keep the whole name on an 80-column line
    long = bar_line(event(1, task="/home/ann/" + "x" * 100 + "/notes.md: embedding"), 1.0, columns=80)
    assert len(long) == 79  # then the name is cut from the left to fit
    assert long.startswith("…xxxxxxxxxxx/notes.md: embedding [----------]")


def test_a_terminal_gets_one_line_redrawn_at_most_twice_a_second() -> None:
    out, clock = FakeTerminal(), Clock()
    bar = TerminalBar(out, columns=100, clock=clock)
    for done in range(0, 1_001, 100):  # every 0.2 s
        bar(event(done))
        clock.now += 0.2
    bar(event(1_000))  # told again at the end: drawn once
    text = out.getvalue()
    frames = text.split("\r")[1:]
    assert text.startswith("\r") and text.endswith("\n") and text.count("\n") == 1
    assert len(frames) == 5  # 0, 300, 600, 900 (0.6 s apart) and the end, always drawn
    assert frames[0].startswith("importing [") and "0/1000 turns" in frames[0]
    assert "300/1000 turns" in frames[1] and "ETA 0:01" in frames[1]  # 300 turns in 0.6 s: 1.4 s to go
    assert frames[-1].rstrip("\n").rstrip().endswith("100% 1000/1000 turns 500/s in 0:02")


def test_a_new_task_starts_a_new_line_and_a_short_frame_wipes_a_long_one() -> None:
    out, clock = FakeTerminal(), Clock()
    bar = TerminalBar(out, columns=200, clock=clock)
    bar(event(5, total=10, task="a task with a long name"))
    bar(event(0, total=3, task="next"))  # the first task never finished: its line is ended
    clock.now += 1
    bar(event(3, total=3, task="next"))
    lines = out.getvalue().split("\n")
    assert len(lines) == 3 and lines[-1] == ""
    assert "5/10 turns" in lines[0] and lines[1].count("\r") == 2
    first, second = lines[1].split("\r")[1:]
    assert len(second) >= len(first)  # padded: nothing of a longer frame stays on screen
    bar.close()  # nothing open: nothing written
    assert out.getvalue().endswith("in 0:01  \n")


def test_progress_to_a_terminal_ends_the_line_when_the_command_fails() -> None:
    out = FakeTerminal()

    def interrupted() -> None:
        with progress_to(out) as progress:
            progress(event(10))
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        interrupted()
    assert out.getvalue().startswith("\rimporting [") and out.getvalue().endswith("\n")


def test_progress_elsewhere_is_logged_every_tenth_and_writes_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    out = io.StringIO()  # a pipe or a file: no bar
    caplog.set_level(logging.INFO, logger=PROGRESS_LOGGER)
    with progress_to(out) as progress:
        for done in range(0, 1_001, 25):
            progress(event(done))
    assert out.getvalue() == ""
    messages = [r.getMessage() for r in caplog.records if r.name == PROGRESS_LOGGER]
    assert len(messages) == 11
    assert messages[0] == "importing: 0/1000 turns (0%)" and messages[5] == "importing: 500/1000 turns (50%)"
    assert messages[-1].startswith("importing: 1000/1000 turns done in ")


async def test_slash_import_draws_its_bars_on_the_status_stream(
    redis_client: aioredis.Redis, tmp_path: Path
) -> None:
    turns = tuple(
        ExportedTurn(seq=i, tokens=2, message=Message(role="user", sent_from="ann", content=f"note {i}"))
        for i in range(1, 1_201)
    )
    export = tmp_path / "chat.json"
    export.write_text(ConversationExport(user_id="x", chat_id="y", turns=turns).model_dump_json())
    agent = TieredAssistant(make_runtime(ScriptedLLM(), client=redis_client))
    out, status = io.StringIO(), FakeTerminal()
    session = ChatSession(agent, "ann", "c", out, confirm=lambda _: True, status=status)
    assert await session.handle(f"/import {export}")
    assert out.getvalue() == "imported 1200 turns\n"  # the data stream carries only the answer
    lines = status.getvalue().split("\n")
    assert len(lines) == 3 and lines[-1] == ""  # one line per task, each ended
    assert lines[0].startswith("\rimporting 'ann'/'c' [") and "1200/1200 turns" in lines[0]
    assert lines[1].startswith("\rindexing for recall [") and "1200/1200 turns" in lines[1]
    assert await agent.tiers.recall("ann", "c").count() == 1_200
