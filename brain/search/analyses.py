"""Every analysis an index can have been built with, by name: the current ones (`ANALYSIS`; with `w` for
a dated index, whose day is a field weighed apart, and `wt` for a dated index of a conversation's turns,
whose speaker and role are fields too: `brain.search.fields`) and the older ones (`d`: dated, the day
heading the text as words of it), kept so that an index can be rebuilt (the terms an old document was
posted under are found again, removed, and replaced by the current analysis's). Pure."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

from brain.errors import StoreError
from brain.search.analysis import ANALYSIS, term_counts
from brain.search.dates import dated_text
from brain.search.fields import field_counts

__all__ = ["KNOWN", "analysed", "terms_v1"]

KNOWN = ("1", "2", "2d", "3", "3d", ANALYSIS, ANALYSIS + "d", ANALYSIS + "w", ANALYSIS + "wt")
_LEVELS = {"2": 2, "3": 3}  # analysis "2": before the characters of longer Chinese words were terms; "3":
# before irregular verbs, stop words by their written form and the `DATED` term

_WORD = re.compile(r"\w+", re.UNICODE)
_STOPWORDS_V1 = frozenset(
    "a an the and or but if of to in on at by for with from as is are was were be been being am do does did "
    "i me my we our you your he him his she her it its they them their this that these those there here "
    "what which who whom how why when where not no so than too very can could would should will shall may "
    "might must have has had just about into over under again then once all any both each few more most "
    "other some such only own same also s t d ll ve re m".split()
)


def _stem_v1(word: str) -> str:
    for suffix, replacement, minimum in (
        ("ies", "y", 5),
        ("sses", "ss", 6),
        ("ing", "", 6),
        ("ed", "", 5),
        ("es", "", 5),
        ("s", "", 4),
    ):
        if word.endswith(suffix) and len(word) >= minimum and not word.endswith("ss"):
            return word[: len(word) - len(suffix)] + replacement
    return word


def terms_v1(text: str) -> Counter[str]:
    """Analysis "1" (brain-assistant up to 0.9): `\\w+` words, NFKC, lower case, stop words, a light
    suffix stripper, 48 characters at most."""
    words = _WORD.findall(unicodedata.normalize("NFKC", text).lower())
    return Counter(_stem_v1(w)[:48] for w in words if w not in _STOPWORDS_V1)


def analysed(text: str, ts: float, analysis: str, *, role: str = "") -> dict[str, int]:
    """The term counts of a document (`text` written at `ts`; a turn's by `role`) under `analysis`.
    `StoreError` for an analysis this version does not know (an index written by a newer version)."""
    if analysis == "1":
        return dict(terms_v1(text))
    if analysis not in KNOWN:
        raise StoreError(
            f"an index was built by analysis {analysis!r}, which this version does not know "
            f"({', '.join(KNOWN)}): is a newer brain-assistant writing to the same Redis?"
        )
    level = _LEVELS.get(analysis.rstrip("dwt"), 4)
    if analysis.endswith(("w", "wt")):
        return field_counts(text, ts, level=level, turn=analysis.endswith("t"), role=role)
    dated = dated_text(text, ts) if analysis.endswith("d") else text
    return dict(term_counts(dated, chars=level > 2, level=level))
