"""The JSON a model wrote, read tolerantly: the one parser every structured reply goes through. Pure.

Valid JSON is read by `json.loads`, exactly and as fast as before. Anything else is repaired by the
maintained `json_repair` library: code fences, prose around the JSON, trailing commas, single quotes,
Python's True/False/None, unquoted keys, several objects in a row (a list of them). Two things are refused
rather than repaired: a reply with no JSON in it, and a reply cut inside its JSON (a reply that is an
unfinished prefix of JSON: the token limit, a dropped stream), which a repair would close and pass off as
whole. Every refusal is a `ValueError` that says what came back (`excerpt`).
"""

from __future__ import annotations

import json
import re
from typing import Any

import jiter
import json_repair

from brain.jsontext import without_surrogates

__all__ = ["REPAIR_LIMIT", "excerpt", "json_object", "json_value"]

REPAIR_LIMIT = 65_536
"""Characters of a broken reply the repair reads at most: it takes time superlinear in the length of an
unterminated string (~0.1 s at this size), and no structured reply is this long unless it looped."""

_THINKING = re.compile(r"\A\s*<think>.*?</think>", re.DOTALL)  # a reasoning model's preamble


def excerpt(value: Any, limit: int = 120) -> str:
    """What came back, for an error message: text as it is, anything else as JSON, cut to `limit`
    characters (marked `…`), quoted, and free of lone surrogates (a message must be encodable)."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=repr)
        except (TypeError, ValueError, RecursionError):
            text = repr(value)
    cut = len(text) > limit
    return repr(without_surrogates(text[:limit])) + ("…" if cut else "")


def json_value(reply: str) -> Any:
    """The JSON value in `reply` (see the module's docstring); `ValueError` saying what came back when
    there is none, or it was cut."""
    try:
        return json.loads(reply)
    except RecursionError:
        raise ValueError(f"the reply's JSON is nested too deeply: {excerpt(reply)}") from None
    except ValueError as exc:
        if _cut(reply, exc):
            raise ValueError(f"the reply ends inside its JSON: {excerpt(reply)}") from None
    if len(reply) > REPAIR_LIMIT:
        raise ValueError(f"no valid JSON in a reply of {len(reply):,} characters: {excerpt(reply)}")
    text = _THINKING.sub("", reply, count=1)
    try:
        value = json_repair.loads(text, skip_json_loads=True)
    except (ValueError, TypeError, IndexError, RecursionError):
        value = ""
    if value == "" or isinstance(value, tuple):  # what json_repair gives for text with no JSON in it
        raise ValueError(f"no JSON in the reply: {excerpt(reply)}")
    return value


def json_object(reply: str) -> dict[str, Any]:
    """The JSON object in `reply`: the value itself, or the first object of a list (several objects in a
    row, or one in brackets); `ValueError` saying what came back for anything else."""
    value = json_value(reply)
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, dict)), value)
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object, got {excerpt(reply)}")
    return value


def _cut(reply: str, error: ValueError) -> bool:
    """Whether `reply`, which `json.loads` refused with `error`, is JSON cut short: an unfinished prefix of
    a JSON document (and not a whole one followed by more text)."""
    if not isinstance(error, json.JSONDecodeError) or error.msg.startswith("Extra data"):
        return False
    try:
        jiter.from_json(reply.encode("utf-8", "surrogatepass"), partial_mode="trailing-strings")
    except (ValueError, RecursionError):
        return False
    return True
