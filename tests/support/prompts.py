"""Reading what a model was sent: the system message's memory section, its items, and the rest."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from actions.memory_section import MEMORY_CLOSE, MEMORY_OPEN
from brain.llm.protocol import ChatMessage

__all__ = ["memory_items", "memory_section", "outside_memory", "prompt_text", "search_results"]

_ITEM = re.compile(r'<item kind="([^"]*)"([^>]*)>\n(.*?)\n</item>', re.DOTALL)


def prompt_text(messages: Sequence[ChatMessage]) -> str:
    """Every message's text, one after another: the whole prompt as the model read it."""
    return "\n".join(m.content or "" for m in messages)


def memory_section(messages: Sequence[ChatMessage]) -> str:
    """The one memory section of the prompt (between its delimiter lines); "" when there is none. Fails
    when there is more than one, or one outside the first system message."""
    sections = [m for m in messages if MEMORY_OPEN in (m.content or "")]
    if not sections:
        return ""
    assert len(sections) == 1 and sections[0] is messages[0] and messages[0].role == "system", sections
    text = sections[0].content or ""
    assert text.count(f"\n{MEMORY_OPEN}\n") == 1 and text.count(f"\n{MEMORY_CLOSE}") == 1, text
    return text.split(f"\n{MEMORY_OPEN}\n", 1)[1].split(f"\n{MEMORY_CLOSE}", 1)[0]


def memory_items(messages: Sequence[ChatMessage]) -> list[tuple[str, str, str]]:
    """The memory section's items as (kind, attributes after the kind, text)."""
    return [(m[1], m[2], m[3]) for m in _ITEM.finditer(memory_section(messages))]


def search_results(messages: Sequence[ChatMessage]) -> list[Any]:
    """The JSON of each memory search result in the memory section, in order."""
    return [json.loads(text) for kind, _, text in memory_items(messages) if kind.startswith("search result")]


def outside_memory(messages: Sequence[ChatMessage], *, users: bool = False) -> str:
    """Everything the model was sent outside the memory section (user messages only with `users`): text,
    tool calls' names and arguments."""
    parts = []
    for m in messages:
        if m.role == "user" and not users:
            continue
        text = m.content or ""
        if MEMORY_OPEN in text:
            before, rest = text.split(f"\n{MEMORY_OPEN}\n", 1)
            text = before + rest.split(f"\n{MEMORY_CLOSE}", 1)[1]
        parts += [text, *(f"{c.name} {c.arguments}" for c in m.tool_calls)]
    return "\n".join(parts)
