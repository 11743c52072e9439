"""The day a document was written, as words an index can match: "7 February 2022" ("2022年2月7日"
beside Chinese or Japanese text), so a question naming the day in any form the analysis understands finds
it. Pure."""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo

from brain.search.analysis import CJK, MONTHS

__all__ = ["date_words", "dated_text"]


def date_words(ts: float, *, cjk: bool = False, tz: tzinfo = UTC) -> str:
    day = datetime.fromtimestamp(ts, tz)
    if cjk:
        return f"{day.year}年{day.month}月{day.day}日"
    return f"{day.day} {MONTHS[day.month - 1].capitalize()} {day.year}"  # not %B: locales differ


def dated_text(text: str, ts: float, *, tz: tzinfo = UTC) -> str:
    """`text` headed by its day in brackets, in the language the text is written in (roughly)."""
    return f"[{date_words(ts, cjk=bool(CJK.search(text[:200])), tz=tz)}] {text}"
