"""Fact extraction and reconciliation: the two LLM tasks of fact memory. Prompts and parsing are pure.

Extraction reads a batch of turns (dated: `render_transcript`) and returns the facts worth keeping, in the
user's language, each naming its subject and attribute (`key`, e.g. `user.city`) and the value it states,
and when it became true (by default the time of the turn that says it). Parsing is
tolerant of how the JSON is written (`brain.llm.json_reply`: code fences, prose around it, trailing
commas, single quotes, Python literals), strict about the result: a reply with no usable JSON is a
`MalformedReplyError` (the batch stays pending, and counts a try), never "no facts".

Reconciliation sees the related facts we already hold under small integer ids (never our real ids) and
says, per new fact, ADD, UPDATE (an existing fact, rewritten), DELETE (an existing fact that stopped being
true) or NONE. An id the model invents is rejected, never applied.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from brain.errors import MalformedReplyError
from brain.llm.json_reply import excerpt, json_object
from brain.llm.protocol import ChatMessage, JsonSchema
from brain.message import Message, speaker

__all__ = [
    "CATEGORIES",
    "RECONCILE_SCHEMA",
    "Decision",
    "NewFact",
    "extract_schema",
    "parse_decisions",
    "parse_facts",
    "parse_json_object",
    "parse_summary",
    "parse_when",
    "render_extract",
    "render_reconcile",
    "render_transcript",
]

CATEGORIES = ("preferences", "personal", "plans", "health", "work", "relationships", "constraints", "misc")


def _object(**properties: dict[str, Any]) -> dict[str, Any]:
    """A strict JSON-schema object: every property required, no others."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


MAX_FACTS = 30
"""Facts one extraction may return: a model that loops stops there instead of at the token limit."""

_FACT = _object(
    text={"type": "string"},
    key={"type": "string"},
    value={"type": "string"},
    category={"type": "string", "enum": list(CATEGORIES)},
    valid_at={"type": ["string", "null"]},
)


def extract_schema(fold: bool = False) -> JsonSchema:
    """The shape of an extraction reply; with `fold`, the rolling summary too."""
    facts = {"type": "array", "items": _FACT, "maxItems": MAX_FACTS}
    if fold:
        return JsonSchema(name="facts_and_summary", shape=_object(facts=facts, summary={"type": "string"}))
    return JsonSchema(name="facts", shape=_object(facts=facts))


RECONCILE_SCHEMA = JsonSchema(
    name="memory_decisions",
    shape=_object(
        memory={
            "type": "array",
            "maxItems": 2 * MAX_FACTS,
            "items": _object(
                event={"type": "string", "enum": ["ADD", "UPDATE", "DELETE", "NONE"]},
                id={"type": ["string", "null"]},
                text={"type": "string"},
                new={"type": "integer"},
            ),
        }
    ),
)
"""The shape of a reconciliation reply."""


class NewFact(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str
    category: str = "misc"
    valid_at: str | None = None  # ISO date or time the fact became true
    key: str = ""  # subject.attribute, e.g. "user.city"
    value: str = ""  # what the fact says of `key`, e.g. "Oslo"


class Decision(BaseModel):
    model_config = ConfigDict(frozen=True)

    event: Literal["ADD", "UPDATE", "DELETE", "NONE"]
    existing: str | None = None  # the real id of the existing fact (UPDATE, DELETE, NONE)
    text: str = ""  # the fact to store (ADD, UPDATE)
    category: str = "misc"
    reason: str = ""
    new: NewFact | None = None  # the new fact it is about, when the reply said which


def render_transcript(turns: Sequence[Message]) -> str:
    """A batch of turns as extraction reads them: `Speaker: text` lines, each run of turns of one minute
    headed by its UTC time on a line of its own (`[2025-01-07 09:30]`), so a fact takes the time of
    the turn that says it, whether the turns are read live or imported years later. Pure."""
    lines: list[str] = []
    last = ""
    for message in turns:
        stamp = message.created_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M")
        if stamp != last:
            lines.append(f"[{stamp}]")
            last = stamp
        lines.append(f"{speaker(message)}: {message.content}")
    return "\n".join(lines)


def render_extract(
    transcript: str, today: datetime | None = None, *, fold: Sequence[str] = (), max_words: int = 200
) -> list[ChatMessage]:
    """The extraction prompt for a batch of turns (`Speaker: text` lines). Pure. With `fold` (the summary
    so far and the turns leaving the window), the same call also writes the new rolling summary."""
    date = (today or datetime.now(UTC)).date().isoformat()
    system = (
        "You keep an assistant's memory of facts about the user: preferences, personal details, plans, "
        "health, work, relationships, constraints and decisions. From the conversation, list each new fact "
        "worth remembering as one short, self-contained sentence about the user. Only what the user says or "
        "confirms; no greetings, no questions, nothing the assistant merely suggested. Write every fact in "
        "the language the user writes in. For each fact give its key, the subject and attribute it is "
        "about as lower-case English words joined by dots (user.city, user.favourite_drink, "
        "user.sister.name: the same key whenever the same thing is meant, whatever the wording), and its "
        "value, the short answer it gives (Oslo, green tea). Lines in brackets give the UTC time of the "
        "turns below them: valid_at is the time of the turn that states the fact, unless the turn says "
        f"when it became true. Resolve relative dates against today's date, {date}. Categories: "
        f"{', '.join(CATEGORIES)}.\n"
        'Reply with JSON only: {"facts": [{"text": "...", "key": "user....", "value": "...", '
        '"category": "...", "valid_at": "YYYY-MM-DD HH:MM or null"}]} — or {"facts": []} when there is '
        "nothing to keep."
    )
    if not fold:
        return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=transcript)]
    system += (
        "\n\nAlso rewrite the conversation's rolling summary from SUMMARIZE (the summary so far and the "
        f"turns leaving the window): at most {max_words} words, in the conversation's language, keeping "
        "names, numbers, decisions and open questions. Add it to the same JSON object as "
        '"summary": "...".'
    )
    user = "NEW TURNS (extract facts):\n" + transcript + "\n\nSUMMARIZE:\n" + "\n".join(fold)
    return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]


def parse_summary(reply: str) -> str:
    """The `"summary"` of a combined extraction reply; `MalformedReplyError` when it is missing or empty."""
    summary = parse_json_object(reply).get("summary")
    if not isinstance(summary, str) or not summary.strip():
        raise MalformedReplyError(f'expected a non-empty "summary", got {excerpt(reply)}')
    return summary.strip()


def parse_json_object(reply: str) -> dict[str, Any]:
    """The JSON object in `reply`, read tolerantly (`brain.llm.json_reply.json_object`);
    `MalformedReplyError` saying what came back when there is none."""
    try:
        return json_object(reply)
    except ValueError as exc:
        raise MalformedReplyError(str(exc)) from None


def parse_facts(reply: str) -> list[NewFact]:
    """`{"facts": [...]}` (items may be plain strings); `MalformedReplyError` when the shape is wrong."""
    data = parse_json_object(reply)
    items = data.get("facts")
    if not isinstance(items, list):
        raise MalformedReplyError(f'expected {{"facts": [...]}}, got {excerpt(reply)}')
    facts = []
    for item in items:
        if isinstance(item, str):
            item = {"text": item}
        if not isinstance(item, dict) or not isinstance(item.get("text"), str) or not item["text"].strip():
            raise MalformedReplyError(f"a fact must have text, got {excerpt(item, 80)}")
        category = item.get("category") if item.get("category") in CATEGORIES else "misc"
        valid_at = item.get("valid_at") if isinstance(item.get("valid_at"), str) else None
        key, value = (item.get(k) if isinstance(item.get(k), str) else "" for k in ("key", "value"))
        facts.append(
            NewFact(
                text=item["text"].strip(), category=str(category), valid_at=valid_at, key=key, value=value
            )
        )
    return facts


def render_reconcile(existing: Sequence[str], new: Sequence[str]) -> list[ChatMessage]:
    """The reconciliation prompt: existing facts as "0", "1", … (never real ids), the new facts. Pure."""
    system = (
        "You maintain a memory of facts about the user. For each NEW fact decide against the EXISTING ones:\n"
        "- ADD: it is new information.\n"
        "- UPDATE: it refines or changes an existing fact about the same thing; give that fact's id and the "
        "merged fact (keep the richer wording, the new information wins).\n"
        "- DELETE: an existing fact is no longer true and the new fact says nothing to keep in its place; "
        "give its id. When a new fact contradicts an existing one, use UPDATE with the new fact instead.\n"
        "- NONE: the new fact is already known; give the id of the fact that says it.\n"
        "Use only the ids listed. Keep the user's language.\n"
        'Reply with JSON only: {"memory": [{"event": "ADD|UPDATE|DELETE|NONE", "id": "0" or null, '
        '"text": "...", "new": 0}]} with one entry per new fact ("new" is its number).'
    )
    listed = "\n".join(f"{i}: {text}" for i, text in enumerate(existing)) or "(none)"
    fresh = "\n".join(f"{i}: {text}" for i, text in enumerate(new))
    user = f"EXISTING facts:\n{listed}\n\nNEW facts:\n{fresh}"
    return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]


def parse_decisions(
    reply: str, existing_ids: Sequence[str], new: Sequence[NewFact]
) -> tuple[list[Decision], list[str]]:
    """Decisions with real ids, and complaints about entries that were rejected (an invented or missing id,
    an unknown event, no text): those are logged, never applied. `MalformedReplyError` when there is no
    JSON list."""
    data = parse_json_object(reply)
    items = data.get("memory")
    if not isinstance(items, list):
        raise MalformedReplyError(f'expected {{"memory": [...]}}, got {excerpt(reply)}')
    decisions: list[Decision] = []
    rejected: list[str] = []
    for item in items:
        if not isinstance(item, dict):
            rejected.append(f"not an object: {excerpt(item, 60)}")
            continue
        event = str(item.get("event", "")).upper()
        number = item.get("new")
        source = new[number] if isinstance(number, int) and 0 <= number < len(new) else None
        given = item.get("text")
        text: str = given if isinstance(given, str) else (source.text if source else "")
        category = source.category if source else "misc"
        about = {"new": source} if source else {}
        raw_id = item.get("id")
        index = int(raw_id) if isinstance(raw_id, int | str) and str(raw_id).strip().isdigit() else None
        real = existing_ids[index] if index is not None and index < len(existing_ids) else None
        if event == "ADD":
            if text.strip():
                decisions.append(Decision(event="ADD", text=text.strip(), category=category, **about))
            else:
                rejected.append("ADD without text")
        elif event in {"UPDATE", "DELETE", "NONE"}:
            if real is None:
                rejected.append(f"{event} names id {raw_id!r}, which was not offered")
            elif event == "UPDATE" and not text.strip():
                rejected.append(f"UPDATE of {raw_id!r} without text")
            else:
                decisions.append(
                    Decision.model_validate(
                        {
                            "event": event,
                            "existing": real,
                            "text": text.strip(),
                            "category": category,
                            **about,
                        }
                    )
                )
        else:
            rejected.append(f"unknown event {item.get('event')!r}")
    return decisions, rejected


def parse_when(value: str | None) -> float | None:
    """An ISO date or time a model wrote (UTC unless it says otherwise), or None when it wrote none or
    something else."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()
