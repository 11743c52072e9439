"""When a failed request to an OpenAI-compatible endpoint is asked again, and after how long: the rules the
`openai` SDK follows (so a request sent by `brain.llm.chat_http` is retried exactly as one the SDK sends).
Pure."""

from __future__ import annotations

import email.utils
import math
import random
import time
from collections.abc import Mapping

__all__ = ["MAX_RETRY_AFTER", "retry_after", "retry_delay", "should_retry"]

MAX_RETRY_AFTER = 120.0  # seconds: a server asking for a longer wait is not asked again
_INITIAL, _MAX = 0.5, 8.0


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The wait a response asks for, in seconds (`retry-after-ms`, then `retry-after` as seconds or as an
    HTTP date), or None. `headers` keys are lower-case."""
    for name, divisor in (("retry-after-ms", 1000), ("retry-after", 1)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            delay = float(value)
        except ValueError:
            continue
        if delay == math.inf and value.strip().lower() not in ("inf", "+inf", "infinity", "+infinity"):
            return MAX_RETRY_AFTER + 1  # an overflowing number is an excessive delay, not "no delay"
        return delay / divisor
    parsed = email.utils.parsedate_tz(headers.get("retry-after") or "")
    if parsed is None:
        return None
    return float(email.utils.mktime_tz(parsed) - time.time())


def should_retry(status: int, headers: Mapping[str, str]) -> bool:
    """Whether a response with `status` is asked again: never past a `Retry-After` over two minutes; as the
    server's `x-should-retry` says; else on 408, 409, 429 and 5xx."""
    wait = retry_after(headers)
    if wait is not None and math.isfinite(wait) and wait > MAX_RETRY_AFTER:
        return False
    explicit = headers.get("x-should-retry")
    if explicit in ("true", "false"):
        return explicit == "true"
    return status in (408, 409, 429) or status >= 500


def retry_delay(attempt: int, headers: Mapping[str, str] | None = None) -> float:
    """Seconds to wait before retry number `attempt` + 1 (0 = the first retry): the server's own wait when
    it gives one within two minutes, else 0.5 s doubling up to 8 s, less a random 0–25 %."""
    wait = retry_after(headers or {})
    if wait is not None and math.isfinite(wait) and 0 < wait <= MAX_RETRY_AFTER:
        return wait
    return min(_INITIAL * 2.0 ** min(attempt, 1000), _MAX) * (1 - 0.25 * random.random())
