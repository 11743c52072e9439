"""The SDK's retry rules, as `brain.llm.retries` states them."""

from __future__ import annotations

import email.utils
import time

import pytest

from brain.llm.retries import MAX_RETRY_AFTER, retry_after, retry_delay, should_retry


def test_retry_after_prefers_milliseconds_then_seconds_then_a_date() -> None:
    assert retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_after({"retry-after": "2.5"}) == 2.5
    assert retry_after({}) is None
    assert retry_after({"retry-after": "soon"}) is None
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    wait = retry_after({"retry-after": later})
    assert wait is not None and 28 <= wait <= 31
    assert retry_after({"retry-after": "1e999"}) == MAX_RETRY_AFTER + 1  # an overflow is too long, not none


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (408, True),
        (409, True),
        (429, True),
        (500, True),
        (503, True),
        (400, False),
        (401, False),
        (404, False),
        (422, False),
    ],
)
def test_which_statuses_are_asked_again(status: int, expected: bool) -> None:
    assert should_retry(status, {}) is expected


def test_the_server_has_the_last_word_but_never_past_two_minutes() -> None:
    assert should_retry(400, {"x-should-retry": "true"})
    assert not should_retry(503, {"x-should-retry": "false"})
    assert not should_retry(429, {"retry-after": "121"})
    assert should_retry(429, {"retry-after": "120"})


def test_delays_honour_the_server_else_back_off_with_jitter() -> None:
    assert retry_delay(0, {"retry-after": "3"}) == 3.0
    assert retry_delay(3, {"retry-after-ms": "250"}) == 0.25
    first = [retry_delay(0) for _ in range(200)]
    assert all(0.375 <= d <= 0.5 for d in first) and len(set(first)) > 1
    assert all(1.5 <= retry_delay(2) <= 2.0 for _ in range(50))
    assert all(6.0 <= retry_delay(30, {"retry-after": "500"}) <= 8.0 for _ in range(50))
