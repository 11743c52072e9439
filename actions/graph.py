"""Graph extraction: the LLM tasks of graph memory, as tool calls. Prompts, tool specs and parsing are pure.

Extraction reads a batch of turns and calls `record_graph` once with the entities and the relations between
them; a relation the turns say ended ("left Google") is flagged `ends`. A contradiction check, only when a
new relation has the same source and relation as a current one with another target, or an ending names no
current relation exactly, shows those under small integer ids and the model calls `retire_relations`.
Malformed arguments (or no call at all) are a `MalformedReplyError`: the batch stays pending (and counts a
try), nothing is applied. Arguments are read tolerantly (`brain.llm.json_reply`), their shape strictly.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from brain.errors import MalformedReplyError
from brain.llm.json_reply import excerpt, json_value
from brain.llm.protocol import ChatMessage, Completion, ToolSpec

__all__ = [
    "RECORD_GRAPH",
    "RETIRE_RELATIONS",
    "Extracted",
    "NewEntity",
    "NewRelation",
    "parse_extracted",
    "parse_retired",
    "render_check",
    "render_extract",
]

_STRING = {"type": "string"}
RECORD_GRAPH = ToolSpec(
    name="record_graph",
    description="Record the people, places, things and events of the conversation and how they relate.",
    parameters={
        "type": "object",
        "properties": {
            "entities": {
                "type": "array",
                "maxItems": 30,  # the default graph.max_entities: a model cannot loop past it
                "items": {
                    "type": "object",
                    "properties": {
                        "name": _STRING,
                        "type": _STRING,
                        "aliases": {"type": "array", "items": _STRING, "maxItems": 5},
                    },
                    "required": ["name", "type"],
                },
            },
            "relations": {
                "type": "array",
                "maxItems": 40,  # the default graph.max_relations
                "items": {
                    "type": "object",
                    "properties": {
                        "source": _STRING,
                        "relation": _STRING,
                        "target": _STRING,
                        "valid_at": {
                            "type": ["string", "null"],
                            "description": "ISO date it became true (with ends: the date it ended)",
                        },
                        "ends": {
                            "type": "boolean",
                            "description": "true when the conversation says this relation ended or is no "
                            "longer true",
                        },
                    },
                    "required": ["source", "relation", "target"],
                },
            },
        },
        "required": ["entities", "relations"],
    },
)
RETIRE_RELATIONS = ToolSpec(
    name="retire_relations",
    description="Retire the existing relations that the new ones show are no longer true.",
    parameters={
        "type": "object",
        "properties": {
            "ids": {"type": "array", "items": {"type": "integer"}, "maxItems": 200},  # graph.max_checks' cap
            "reason": _STRING,
        },
        "required": ["ids"],
    },
)

_EXTRACT = """You turn conversations into a knowledge graph. Call record_graph exactly once.
- entities: people, pets, places, organisations, things and events that are named or clearly meant; type is
  one lowercase word (person, animal, place, organisation, thing, event); aliases are other names used.
- relations: facts between two entities, as short snake_case verbs in the conversation's language
  (lives_in, sister_of, adopted, works_at, 住在). Use a speaker's name, never "I", "me" or "user".
- Only what the conversation states. valid_at is the ISO date a relation began, when the text says so.
- A relation the conversation says ended or is no longer true ("left Google", "quit her job", "no longer
  lives in Rome", "divorced Tom", 从腾讯离职, 不再住在上海): record the relation that ended (works_at,
  lives_in, married_to, 住在) with ends: true, and valid_at the date it ended when the text says so.
  Visiting or mentioning something ends nothing.
- Nothing worth recording: call record_graph with empty lists.
Today is {today}."""

_CHECK = """A knowledge graph gained new relations. For each existing relation, decide whether a new one shows
it is no longer true (someone moved, changed jobs, a pet was renamed). Do not retire a relation that can
be true beside the new one (likes pizza and likes sushi). A new relation marked [ended] says it stopped
being true: retire the existing relation it ends (left Google ends works_at Google), never one that can
still be true (visited Google). Call retire_relations once with the ids to retire (an empty list when
none)."""


class NewEntity(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    name: str = Field(min_length=1, max_length=200)
    type: str = Field("thing", max_length=40)
    aliases: tuple[str, ...] = ()


class NewRelation(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    source: str = Field(min_length=1, max_length=200)
    relation: str = Field(min_length=1, max_length=64)
    target: str = Field(min_length=1, max_length=200)
    valid_at: str | None = None
    ends: bool | None = None  # true: the relation ended (valid_at is when)


class Extracted(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    entities: tuple[NewEntity, ...] = ()
    relations: tuple[NewRelation, ...] = ()


def render_extract(transcript: str, today: datetime | None = None) -> list[ChatMessage]:
    day = (today or datetime.now(UTC)).date().isoformat()
    return [
        ChatMessage(role="system", content=_EXTRACT.format(today=day)),
        ChatMessage(role="user", content=f"Conversation:\n{transcript}"),
    ]


def render_check(existing: Sequence[str], new: Sequence[str]) -> list[ChatMessage]:
    """`existing` relations are shown under ids 0, 1, …; never our real ids."""
    listed = "\n".join(f"{i}. {line}" for i, line in enumerate(existing))
    return [
        ChatMessage(role="system", content=_CHECK),
        ChatMessage(
            role="user", content=f"Existing relations:\n{listed}\n\nNew relations:\n" + "\n".join(new)
        ),
    ]


def _arguments(reply: Completion, tool: str) -> dict[str, Any]:
    calls = [c for c in reply.tool_calls if c.name == tool]
    if not calls:
        got = f"text {excerpt(reply.content)}" if reply.content else "nothing"
        raise MalformedReplyError(f"{reply.model}: expected a {tool} call, got {got}")
    try:
        arguments = json_value(calls[0].arguments or "{}")
    except ValueError as exc:
        raise MalformedReplyError(f"{reply.model}: malformed {tool} arguments: {exc}") from None
    if not isinstance(arguments, dict):
        raise MalformedReplyError(f"{reply.model}: {tool} arguments are not an object: {excerpt(arguments)}")
    return arguments


def parse_extracted(reply: Completion, max_entities: int, max_relations: int) -> tuple[Extracted, int]:
    """The entities and relations of a `record_graph` call, cut to the caps; and how many were cut."""
    arguments = _arguments(reply, RECORD_GRAPH.name)
    try:
        extracted = Extracted.model_validate(arguments)
    except ValidationError as exc:
        raise MalformedReplyError(
            f"{reply.model}: malformed record_graph arguments ({exc.error_count()} errors): "
            f"{excerpt(arguments)}"
        ) from None
    cut = max(len(extracted.entities) - max_entities, 0) + max(len(extracted.relations) - max_relations, 0)
    capped = Extracted(
        entities=extracted.entities[:max_entities], relations=extracted.relations[:max_relations]
    )
    return capped, cut


def parse_retired(reply: Completion, count: int) -> tuple[list[int], str]:
    """The ids (among 0..count-1) a `retire_relations` call names, and its reason; an id out of range is an
    `MalformedReplyError` (never applied to a relation the model was not shown)."""
    arguments = _arguments(reply, RETIRE_RELATIONS.name)
    ids = arguments.get("ids")
    if not isinstance(ids, list) or any(type(i) is not int or not 0 <= i < count for i in ids):
        raise MalformedReplyError(
            f"{reply.model}: retire_relations names ids outside 0..{count - 1}: {excerpt(ids, 80)}"
        )
    reason = arguments.get("reason")
    return sorted(set(ids)), reason if isinstance(reason, str) else ""
