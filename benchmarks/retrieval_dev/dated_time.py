"""The windows a temporal question of the dated dev set can name for an event's day: relative to the time it
is asked ("yesterday", "three days ago", "last week", "last month") or by name ("on 4 March", "in March").
Pure."""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import NamedTuple

__all__ = ["Window", "month_end", "windows"]


class Window(NamedTuple):
    kind: str  # yesterday, days_ago, last_week, last_month, on_day, in_month
    n: int  # the days of days_ago, else 0
    asked: date | None  # the day the question is asked on; None: at the end of the conversation
    start: date  # the first and last day the question means
    end: date


def month_end(day: date) -> date:
    following = date(day.year + day.month // 12, day.month % 12 + 1, 1)
    return following - timedelta(days=1)


def windows(day: date, rng: random.Random) -> list[Window]:
    """Every window naming `day`, each with the day asked (a relative one resolves to `day`'s window from
    it: "last week" is asked in the ISO week after `day`'s, "last month" in the month after)."""
    monday = day - timedelta(days=day.weekday())
    n = rng.randint(2, 6)
    first = day.replace(day=1)
    return [
        Window("yesterday", 0, day + timedelta(days=1), day, day),
        Window("days_ago", n, day + timedelta(days=n), day, day),
        Window("last_week", 0, monday + timedelta(days=7 + rng.randint(0, 6)), monday, monday + timedelta(6)),
        Window("last_month", 0, month_end(day) + timedelta(days=rng.randint(1, 26)), first, month_end(day)),
        Window("on_day", 0, None, day, day),
        Window("in_month", 0, None, first, month_end(day)),
    ]
