"""JSON for a model to read (tool results): non-ASCII text as it is, "猫" and not "\\u732b" (which costs a
model about six times the tokens), still valid JSON, and never a lone surrogate, which no UTF-8 request can
carry (each becomes U+FFFD; a high and a low one in a row become the character they encode, as a JSON
parser would read their escapes). Pure."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

__all__ = ["lone_surrogate_at", "model_json", "without_surrogates"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def without_surrogates(text: str) -> str:
    """`text` with surrogate pairs joined into their characters and lone surrogates replaced by U+FFFD."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def lone_surrogate_at(value: Any, path: str = "") -> str | None:
    """The dotted path of the first string in `value` (a str, or lists, tuples and dicts of them, keys
    included) holding a surrogate code point, which no UTF-8 text can carry (a parsed JSON pair is already
    one character); None when there is none. Pure."""
    if isinstance(value, str):
        return (path or "value") if _SURROGATE.search(value) else None
    if isinstance(value, dict):
        items: Any = ((str(k), k, v) for k, v in value.items())
    elif isinstance(value, list | tuple):
        items = ((str(i), None, v) for i, v in enumerate(value))
    else:
        return None
    for name, key, item in items:
        where = f"{path}.{name}" if path else name
        if isinstance(key, str) and _SURROGATE.search(key):
            return f"{path or 'value'} (a key)"
        found = lone_surrogate_at(item, where)
        if found is not None:
            return found
    return None


def model_json(value: Any, *, default: Callable[[Any], Any] | None = None) -> str:
    """`value` as JSON text with non-ASCII characters as they are (`json.dumps(ensure_ascii=False)`) and no
    surrogates (`without_surrogates`; inside JSON they can only be in strings, so it stays valid)."""
    return without_surrogates(json.dumps(value, ensure_ascii=False, default=default))
