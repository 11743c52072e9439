"""Relation names that say another relation ended ("no_longer_lives_in", "left", "不再住在", "离职"): the
fallback for an extraction that names an ending without flagging it. Pure rules of spelling, in English and
Chinese, over names spelled by `relation_name`."""

from __future__ import annotations

import re

__all__ = ["ended_relation"]

# a negation before the relation it negates: "no_longer_lives_in" -> "lives_in", "不再住在" -> "住在"
_NEGATED = re.compile(
    r"(?:no_longer|not_anymore|no_more|stopped|formerly|former|ex|used_to|is_not|isn_t|does_not|doesn_t"
    r"|not)_(?P<rest>\w+)|(?:已经?)?不再(?P<zh>\w+)"
)
# a verb that ends a relation without saying which: "left Google", "broke up with Tom", "从腾讯离职"
_ENDS = re.compile(
    r"(?:left|leaves|quit|quits|resigned|moved_away|moved_out|divorced|broke_up|split_up|split_from"
    r"|separated|dropped_out|retired|laid_off)(?:_\w+)?|(?:已经?)?(?:离开|离职|辞职|辞去|搬离|搬出|分手"
    r"|离婚|分开|退出|退学|退休)\w*"
)
_NOT_ENDS = re.compile(r"(?:left|leaves)_for(?:_\w+)?")  # "left for Paris" is a move: a new target


def ended_relation(name: str) -> str | None:
    """For a relation `name` that says a relation ended, the relation it ends ("no_longer_works_at" ->
    "works_at", "不再住在" -> "住在"), or "" when it does not say which ("left", "quit_job_at",
    "broke_up_with", "离职", "分手"); None when it says no ending ("works_at", "visited", "left_for").
    Pure."""
    negated = _NEGATED.fullmatch(name)
    if negated is not None:
        return (negated["rest"] or negated["zh"]).strip("_")
    if _ENDS.fullmatch(name) is not None and _NOT_ENDS.fullmatch(name) is None:
        return ""
    return None
