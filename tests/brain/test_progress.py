"""The progress seam: events, the reporting helper, and the log that counts tenths of the way."""

from __future__ import annotations

import logging

import pytest
from pydantic import ValidationError

from brain.progress import PROGRESS_LOGGER, ProgressEvent, ProgressLog, report, within


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_events_are_frozen_and_know_how_far_they_are() -> None:
    event = ProgressEvent(task="importing", done=250, total=1000, unit="turns")
    assert event.fraction == 0.25 and not event.finished
    assert ProgressEvent(task="t", done=3, total=3).finished
    with pytest.raises(ValidationError):
        event.done = 5  # type: ignore[misc]
    with pytest.raises(ValidationError):
        ProgressEvent(task="t", done=-1, total=3)


def test_report_tells_only_a_progress_and_only_when_there_is_work() -> None:
    seen: list[ProgressEvent] = []
    report(None, "t", 1, 2, "turns")  # nobody asked: nothing happens
    report(seen.append, "t", 0, 0, "turns")  # nothing to do: nothing told
    report(seen.append, "t", 1_500, 1_000, "turns")  # a last chunk never counts past the total
    assert seen == [ProgressEvent(task="t", done=1_000, total=1_000, unit="turns")]
    assert within(None, "notes.md") is None
    prefixed = within(seen.append, "notes.md")
    assert prefixed is not None
    prefixed(ProgressEvent(task="embedding", done=1, total=2, unit="passages"))
    assert seen[-1].task == "notes.md: embedding" and (seen[-1].done, seen[-1].total) == (1, 2)


def test_the_log_says_each_tenth_once_and_the_end_with_its_time(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    log = ProgressLog(clock=clock)
    caplog.set_level(logging.INFO, logger=PROGRESS_LOGGER)
    for done in range(0, 1_001, 50):  # 21 events
        clock.now += 0.5
        log(ProgressEvent(task="importing", done=done, total=1_000, unit="turns"))
    records = [r for r in caplog.records if r.name == PROGRESS_LOGGER]
    assert all(r.levelno == logging.INFO for r in records)
    messages = [r.getMessage() for r in records]
    assert messages[:3] == [
        "importing: 0/1000 turns (0%)",
        "importing: 100/1000 turns (10%)",
        "importing: 200/1000 turns (20%)",
    ]
    assert len(messages) == 11 and messages[-1] == "importing: 1000/1000 turns done in 10.0 s"
    caplog.clear()
    log(ProgressEvent(task="importing", done=1_000, total=1_000, unit="turns"))  # told twice: said once
    log(ProgressEvent(task="indexing", done=7, total=7, unit="turns"))  # a task done in one step
    assert [r.getMessage() for r in caplog.records] == ["indexing: 7/7 turns done in 0.0 s"]
