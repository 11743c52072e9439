"""Time expressions of a question, in English and Chinese, resolved against the moment it was asked:
"yesterday", "last week", "3 days ago", "last Friday", "in March", "上个月", "上周", "昨天", "三月",
"去年五月" become a period of time (`Span`), which search prefers (`brain.search.query`). Days are
calendar days in `tz`; a week starts on Monday; a month named without its year ("in March", "三月") is
its latest one not after the question. A date written out in full ("7 May 2022") is not resolved: the
analysis matches it to the day heading each dated document already. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from brain.search.analysis import MONTHS

__all__ = ["Span", "time_span", "time_span_on"]


@dataclass(frozen=True, slots=True)
class Span:
    """A period of time: `start` and `end` in seconds since the epoch, both included."""

    start: float
    end: float


_NUMBERS = {
    w: i for i, w in enumerate("one two three four five six seven eight nine ten eleven twelve".split(), 1)
}
_NUMBERS |= {"a": 1, "an": 1, "a couple of": 2, "a few": 3, "couple of": 2, "few": 3}
_CN = {c: i for i, c in enumerate("一二三四五六七八九十", start=1)} | {"两": 2}
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_CN_WEEKDAYS = {c: i for i, c in enumerate("一二三四五六日")} | {"天": 6}
_COUNT = (
    r"(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|(?:a )?couple of|(?:a )?few)"
)
_CN_COUNT = r"(\d+|[一二两三四五六七八九十]+)"
_MONTH = "|".join(MONTHS) + r"|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec"
_MONTH_WORDS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
"""What every name of a month holds (its first three letters)."""
_MONTH_NUMBERS = {m[:3]: i for i, m in enumerate(MONTHS, 1)}


@dataclass(frozen=True, slots=True)
class _Days:
    """A period as calendar days, `first` to `last` included."""

    first: date
    last: date


def _count(text: str) -> int:
    text = text.lower()
    if text.isdigit():
        return int(text)
    if text in _NUMBERS:
        return _NUMBERS[text]
    if text.startswith("十"):  # 十, 十二
        return 10 + (_CN.get(text[1:], 0) if len(text) > 1 else 0)
    if len(text) == 2 and text[1] == "十":  # 二十
        return _CN[text[0]] * 10
    if len(text) == 3 and text[1] == "十":  # 二十三
        return _CN[text[0]] * 10 + _CN[text[2]]
    return _CN.get(text, 1)


def _month_start(day: date, back: int) -> date:
    index = day.year * 12 + day.month - 1 - back
    return date(index // 12, index % 12 + 1, 1)


def _month(day: date, back: int) -> _Days:
    first = _month_start(day, back)
    return _Days(first, _month_start(day, back - 1) - timedelta(days=1))


def _week(day: date, back: int) -> _Days:
    monday = day - timedelta(days=day.weekday() + 7 * back)
    return _Days(monday, monday + timedelta(days=6))


def _year(day: date, back: int) -> _Days:
    return _Days(date(day.year - back, 1, 1), date(day.year - back, 12, 31))


def _ago(day: date, n: int, unit: str, vague: bool = False) -> _Days:
    if unit.startswith(("day", "天")):
        wide = 2 if vague else 0  # "a few days ago"
        return _Days(day - timedelta(days=n + wide), day - timedelta(days=n - wide))
    if unit.startswith(("week", "周", "星期", "个星期")):
        return _Days(day - timedelta(days=7 * n + 3), day - timedelta(days=7 * n - 3))
    if unit.startswith(("month", "个月")):
        return _month(day, n)
    return _year(day, n)


def _weekday(day: date, weekday: int, week_back: int | None) -> _Days:
    """That weekday of the week `week_back` weeks before; without one, its latest before today."""
    if week_back is None:
        back = (day.weekday() - weekday) % 7 or 7
        return _Days(day - timedelta(days=back), day - timedelta(days=back))
    found = _week(day, week_back).first + timedelta(days=weekday)
    return _Days(found, found)


def _named_month(day: date, month: int, year_back: int | None, last: bool = False) -> _Days:
    """Month `month` of the year `year_back` years before; without one, its latest one not after `day`
    (before `day`'s month with `last`: "last March" asked in March is a year before)."""
    if year_back is not None:
        year = day.year - year_back
    else:
        year = day.year if month < day.month or (month == day.month and not last) else day.year - 1
    first = date(year, month, 1)
    return _Days(first, _month_start(first, -1) - timedelta(days=1))


def _month_number(text: str) -> int:
    if text.isdigit() or text[0] in _CN:
        return _count(text)
    return _MONTH_NUMBERS[_folded(text)[:3]]


_Rule = tuple[re.Pattern[str], Callable[[re.Match[str], date], _Days], bool, tuple[str, ...]]
_YEAR_BACK = {"去": 1, "今": 0, "前": 2}


def _rule(
    pattern: str,
    resolve: Callable[[re.Match[str], date], _Days],
    remove: bool = True,
    needs: tuple[str, ...] = (),
) -> _Rule:
    """A rule: its pattern (case ignored), what a match resolves to, whether its words leave the text, and
    `needs`: words one of which every match holds (lower case; the text is not scanned without one)."""
    return re.compile(pattern, re.IGNORECASE), resolve, remove, needs


def _fixed(back: int) -> Callable[[re.Match[str], date], _Days]:
    return lambda m, d: _Days(d - timedelta(days=back), d - timedelta(days=back))


_CN_RULES: tuple[_Rule, ...] = (
    # Chinese first: a year with its month, then the longer words before the shorter ones inside them
    _rule(
        r"(?P<rel>([去今前])年)\s*(\d{1,2}|十[一二]?|[一二三四五六七八九])\s*月(?!\s*\d|\s*[一二三四五六七八九十]+\s*[日号])",
        lambda m, d: _named_month(d, _month_number(m[3]), _YEAR_BACK[m[2]]),
        remove=False,
        needs=("年",),
    ),
    _rule(r"大前天", _fixed(3), needs=("大前天",)),
    _rule(r"前天", _fixed(2), needs=("前天",)),
    _rule(r"昨[天晚日]|昨儿", _fixed(1), needs=("昨",)),
    _rule(r"今[天晚早日]|今儿", _fixed(0), needs=("今",)),
    _rule(
        _CN_COUNT + r"\s*(天|周|个?星期|个月|年)[以之]?前",
        lambda m, d: _ago(d, _count(m[1]), m[2], "few" in m[1].lower()),
        needs=("前",),
    ),
    _rule(r"上上(?:个)?(?:周|星期|礼拜)", lambda m, d: _week(d, 2), needs=("上上",)),
    _rule(
        r"上(?:个)?周末",
        lambda m, d: _Days(*(_week(d, 1).first + timedelta(days=k) for k in (5, 6))),
        needs=("周末",),
    ),
    _rule(
        r"上(?:个)?(?:周|星期|礼拜)([一二三四五六日天])",
        lambda m, d: _weekday(d, _CN_WEEKDAYS[m[1]], 1),
        needs=("上",),
    ),
    _rule(r"上(?:个)?(?:周|星期|礼拜)", lambda m, d: _week(d, 1), needs=("上",)),
    _rule(r"(?:这|本)(?:个)?(?:周|星期|礼拜)", lambda m, d: _week(d, 0), needs=("这", "本")),
    _rule(
        r"(?:周|星期|礼拜)([一二三四五六日天])",
        lambda m, d: _weekday(d, _CN_WEEKDAYS[m[1]], None),
        needs=("周", "星期", "礼拜"),
    ),
    _rule(r"上上个月", lambda m, d: _month(d, 2), needs=("上上个月",)),
    _rule(r"上个?月", lambda m, d: _month(d, 1), needs=("上",)),
    _rule(r"(?:这个|本)月", lambda m, d: _month(d, 0), needs=("这个月", "本月")),
    _rule(r"去年", lambda m, d: _year(d, 1), needs=("去年",)),
    _rule(r"今年", lambda m, d: _year(d, 0), needs=("今年",)),
    _rule(r"前年", lambda m, d: _year(d, 2), needs=("前年",)),
    _rule(
        r"(?<![\d年])(\d{1,2}|十[一二]?|[一二三四五六七八九])\s*月份?(?!\s*\d|\s*[一二三四五六七八九十]+\s*[日号])",
        lambda m, d: _named_month(d, _month_number(m[1]), None),
        remove=False,
        needs=("月",),
    ),
)
"""Every match of these holds a Chinese character: an ASCII text has none."""
_EN_RULES: tuple[_Rule, ...] = (
    _rule(r"\b(?:the )?day before yesterday\b", _fixed(2), needs=("yesterday",)),
    _rule(r"\byesterday\b|\blast night\b", _fixed(1), needs=("yesterday", "last night")),
    _rule(
        r"\btoday\b|\btonight\b|\bthis (?:morning|afternoon|evening)\b",
        _fixed(0),
        needs=("today", "tonight", "this "),
    ),
    _rule(
        rf"\b{_COUNT} (day|week|month|year)s? ago\b",
        lambda m, d: _ago(d, _count(m[1]), m[2], "few" in m[1].lower()),
        needs=(" ago",),
    ),
    _rule(
        r"\b(?:last|past) weekend\b",
        lambda m, d: _Days(*(_week(d, 1).first + timedelta(days=k) for k in (5, 6))),
        needs=("weekend",),
    ),
    _rule(r"\b(?:the )?week before last\b", lambda m, d: _week(d, 2), needs=("week before last",)),
    _rule(r"\b(?:last|past) week\b", lambda m, d: _week(d, 1), needs=("last week", "past week")),
    _rule(r"\bthis week\b", lambda m, d: _week(d, 0), needs=("this week",)),
    _rule(r"\b(?:the )?month before last\b", lambda m, d: _month(d, 2), needs=("month before last",)),
    _rule(r"\b(?:last|past) month\b", lambda m, d: _month(d, 1), needs=("last month", "past month")),
    _rule(r"\bthis month\b", lambda m, d: _month(d, 0), needs=("this month",)),
    _rule(r"\b(?:last|past) year\b", lambda m, d: _year(d, 1), needs=("last year", "past year")),
    _rule(r"\bthis year\b", lambda m, d: _year(d, 0), needs=("this year",)),
    _rule(
        rf"\b(?:last|on|this past) ({'|'.join(_WEEKDAYS)})\b",
        lambda m, d: _weekday(d, _WEEKDAYS.index(_folded(m[1])), None),
        needs=("day",),
    ),
    _rule(
        rf"\b(?P<rel>last|in|during|since|this) ({_MONTH})\b(?!\.? ?\d)",
        lambda m, d: _named_month(
            d, _month_number(m[2]), 0 if _folded(m[1]) == "this" else None, _folded(m[1]) == "last"
        ),
        remove=False,
        needs=_MONTH_WORDS,
    ),
)
_RULES = (*_CN_RULES, *_EN_RULES)
_NEEDED = tuple(dict.fromkeys(w for *_, needs in _RULES for w in needs))
"""Every rule's words: a text holding none of them has no time expression."""
_ANY_NEEDED = re.compile("|".join(re.escape(w) for w in _NEEDED))
"""Finds one of `_NEEDED` in a folded text in one scan (whether any is there, not which)."""
_RULES_OF = {w: frozenset(i for i, (*_, needs) in enumerate(_RULES) if w in needs) for w in _NEEDED}
"""The rules (by index) that each word lets run."""


_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})
"""The letters beyond ASCII that a pattern ignoring case matches to an ASCII letter (İ ı ſ K)."""


def _folded(text: str) -> str:
    """`text` in lower case, where a pattern ignoring case would see an ASCII letter: a word of `needs` is
    in it whenever a match holds the word, in any case."""
    return text.lower() if text.isascii() else text.translate(_FOLD).lower()


def time_span(text: str, asked_at: float, *, tz: tzinfo = UTC) -> tuple[Span | None, str]:
    """The period the time expressions of `text` name, asked at `asked_at` (seconds since the epoch; days
    in `tz`), from the first day's start to the last day's end (None without any), and `text` without
    the expressions whose words are only relative ("yesterday", "上周"; a month's name stays: it finds
    the day heading dated documents). Pure."""
    return time_span_on(text, datetime.fromtimestamp(asked_at, tz).date(), tz=tz)


def time_span_on(text: str, today: date, *, tz: tzinfo = UTC) -> tuple[Span | None, str]:
    """`time_span` of a question asked on `today` (a calendar day in `tz`). Pure; not cached here: a
    search's whole analysis of a question is, once a day (`brain.search.query.analyse_query`)."""
    if _ANY_NEEDED.search(_folded(text)) is None:
        return None, text  # most questions: no rule can match
    return _resolved(text, today, tz)


def _resolved(text: str, today: date, tz: tzinfo, *, gated: bool = True) -> tuple[Span | None, str]:
    """`time_span_on`'s answer; with `gated`, a rule runs only on a text holding one of its `needs`."""
    masked, kept, folded = text, list(text), _folded(text)
    found: list[_Days] = []
    if gated:
        rules = sorted(set[int]().union(*(_RULES_OF[w] for w in _NEEDED if w in folded)))
    else:
        rules = list(range(len(_RULES)))
    for index in rules:
        pattern, resolve, remove, _ = _RULES[index]
        matches = list(pattern.finditer(masked))
        if not matches:
            continue
        pieces: list[str] = []
        at = 0
        for match in matches:
            found.append(resolve(match, today))
            begin, end = (
                match.span() if remove else match.span("rel") if "rel" in match.re.groupindex else (0, 0)
            )
            kept[begin:end] = " " * (end - begin)
            start, stop = match.span()  # masked: not found again by a shorter rule
            pieces += (masked[at:start], "\0" * (stop - start))
            at = stop
        masked = "".join(pieces) + masked[at:]  # once a rule, not once a match: linear in a long text
    if not found:
        return None, text
    first, last = min(d.first for d in found), max(d.last for d in found)
    since = datetime.combine(first, time(), tz).timestamp()
    until = datetime.combine(last + timedelta(days=1), time(), tz).timestamp() - 0.001
    return Span(since, until), "".join(kept)
