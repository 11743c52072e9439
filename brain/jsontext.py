"""JSON for a model to read (tool results): non-ASCII text as it is, "猫" and not "\\u732b" (which costs a
model about six times the tokens), still valid JSON, and never a lone surrogate, which no UTF-8 request can
carry (each becomes U+FFFD; a high and a low one in a row become the character they encode, as a JSON
parser would read their escapes). Pure."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

__all__ = ["model_json", "without_surrogates"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def without_surrogates(text: str) -> str:
    """`text` with surrogate pairs joined into their characters and lone surrogates replaced by U+FFFD."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def model_json(value: Any, *, default: Callable[[Any], Any] | None = None) -> str:
    """`value` as JSON text with non-ASCII characters as they are (`json.dumps(ensure_ascii=False)`) and no
    surrogates (`without_surrogates`; inside JSON they can only be in strings, so it stays valid)."""
    return without_surrogates(json.dumps(value, ensure_ascii=False, default=default))
