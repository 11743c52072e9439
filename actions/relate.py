"""IsRelated and Rewrite: does a new message depend on the conversation so far, and what does it mean in it.

Parsing is strict about what is said, tolerant of how (`brain.llm.json_reply`): an answer that is not
exactly TRUE/FALSE (or the JSON asked for) is a `MalformedReplyError` that says what came back.
Cheap lexical checks, pure and in English and Chinese, spare the LLM call where they can:
`may_refer` (does the message point back: it, that, there, 那里, 它, "what about", ...呢; see
`actions.pointers`) gates the rewrite of every turn; `clearly_unrelated` (no pointer and no shared content
word) gates `is_related`; a rewrite that invents what the conversation does not say is not used.
"""

from __future__ import annotations

from collections.abc import Sequence

from actions.base import Action, ActionContext, transcript
from actions.pointers import faithful, points_back
from brain.errors import LLMError, MalformedReplyError
from brain.llm.json_reply import excerpt, json_value
from brain.llm.protocol import LLM, ChatMessage, JsonSchema
from brain.message import Message, speaker
from brain.search.analysis import terms

__all__ = [
    "RELATE_SCHEMA",
    "IsRelated",
    "RelateAndRewrite",
    "Rewrite",
    "clearly_unrelated",
    "context_of",
    "is_related",
    "may_refer",
    "parse_relate_and_rewrite",
    "parse_verdict",
    "points_back",
    "relate_and_rewrite",
    "render_is_related",
    "render_relate_and_rewrite",
    "render_rewrite",
    "rewrite",
]


def may_refer(context: str, text: str) -> bool:
    """True when `text` may depend on `context`: it `points_back`, and there is a context. Pure."""
    return bool(context.strip()) and points_back(text)


def clearly_unrelated(context: str, text: str) -> bool:
    """True when `text` cannot depend on `context`: nothing points back (`may_refer`) and no content word
    (stemmed, English or Chinese) is shared. Pure."""
    if not context.strip():
        return True
    if may_refer(context, text):
        return False
    return not set(terms(text, chars=False)) & set(terms(context, chars=False))


def context_of(summary: str, history: Sequence[Message], turns: int = 8, max_chars: int = 6_000) -> str:
    """What a new message is related to and rewritten with: the summary and the newest `turns` turns
    (speaker: text), cut from the oldest end to `max_chars`. Pure."""
    lines = [f"{speaker(m)}: {m.content}" for m in history[-turns:]]
    if summary:
        lines.insert(0, f"Summary of earlier conversation: {summary}")
    text = "\n".join(lines)
    return text[-max_chars:]


def render_is_related(context: str, text: str) -> list[ChatMessage]:
    system = (
        "You judge whether a new message depends on an earlier conversation: it refers to, continues or "
        "needs that conversation to be understood. Answer with exactly one word: TRUE or FALSE."
    )
    user = f"## Conversation so far\n{context}\n---\n## New message\n{text}"
    return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]


def parse_verdict(reply: str) -> bool:
    """Exactly TRUE or FALSE (any case, optional quotes or full stop); anything else is a
    `MalformedReplyError`."""
    word = reply.strip().strip("\"'`*").rstrip(".").strip().upper()
    if word not in {"TRUE", "FALSE"}:
        raise MalformedReplyError(f"expected TRUE or FALSE, got {excerpt(reply, 80)}")
    return word == "TRUE"


def render_rewrite(sentence: str, context: str) -> list[ChatMessage]:
    system = (
        "Rewrite the new message so that it can be understood without the conversation: replace words "
        "like it, that or there with what they refer to. Add nothing the conversation does not say, and "
        "keep the message's language and intent. Reply with the rewritten message only."
    )
    user = f"## Conversation so far\n{context}\n---\n## New message\n{sentence}"
    return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]


def render_relate_and_rewrite(sentence: str, context: str) -> list[ChatMessage]:
    system = (
        "Decide whether the new message depends on the conversation so far. If it does, rewrite it so it "
        "can be understood alone (resolve it/that/there; add nothing the conversation does not say). "
        'Reply with JSON only: {"related": true, "rewritten": "..."} '
        'or {"related": false, "rewritten": null}.'
    )
    user = f"## Conversation so far\n{context}\n---\n## New message\n{sentence}"
    return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]


def parse_relate_and_rewrite(reply: str) -> tuple[bool, str | None]:
    """Strict about the result: a JSON object (however it is written, `json_value`) with boolean
    `related` and, when related, a non-empty string `rewritten`; else a `MalformedReplyError`."""
    try:
        data = json_value(reply)
    except ValueError as exc:
        raise MalformedReplyError(str(exc)) from None
    if not isinstance(data, dict) or not isinstance(data.get("related"), bool):
        raise MalformedReplyError(f'expected {{"related": true|false, ...}}, got {excerpt(reply, 80)}')
    if not data["related"]:
        return False, None
    rewritten = data.get("rewritten")
    if not isinstance(rewritten, str) or not rewritten.strip():
        raise MalformedReplyError(f"related, but no rewritten message in {excerpt(reply, 80)}")
    return True, rewritten.strip()


async def is_related(llm: LLM, context: str, text: str) -> bool:
    """Whether `text` depends on `context`; no LLM call when clearly unrelated."""
    if clearly_unrelated(context, text):
        return False
    reply = await llm.complete(render_is_related(context, text), max_tokens=5)
    return parse_verdict(reply.content or "")


async def rewrite(llm: LLM, sentence: str, context: str) -> str:
    """`sentence` made self-contained using `context` (only the rewritten sentence, never doubled)."""
    reply = await llm.complete(render_rewrite(sentence, context))
    text = (reply.content or "").strip()
    if not text:
        raise MalformedReplyError(f"{llm.model}: the rewrite came back empty")
    return text


RELATE_SCHEMA = JsonSchema(
    name="relate_and_rewrite",
    shape={
        "type": "object",
        "properties": {"related": {"type": "boolean"}, "rewritten": {"type": ["string", "null"]}},
        "required": ["related", "rewritten"],
        "additionalProperties": False,
    },
)


async def relate_and_rewrite(llm: LLM, sentence: str, context: str) -> str:
    """One call for both: the rewritten sentence when related, else `sentence` unchanged (no call when
    `clearly_unrelated`). A rewrite that says what neither the sentence nor the context says (`faithful`)
    is not used: memory search gets the sentence as written rather than a model's invention."""
    if clearly_unrelated(context, sentence):
        return sentence
    reply = await llm.complete(render_relate_and_rewrite(sentence, context), json_schema=RELATE_SCHEMA)
    related, rewritten = parse_relate_and_rewrite(reply.content or "")
    if related and rewritten and faithful(rewritten, sentence, context):
        return rewritten
    return sentence


def _split(context: ActionContext) -> tuple[str, str]:
    if not context.messages:
        raise LLMError("nothing to relate: no message received")
    return transcript(context.messages[:-1]), context.messages[-1].content


class IsRelated(Action):
    """As a role action: TRUE or FALSE, does the last message depend on the ones before it."""

    def __init__(self) -> None:
        super().__init__("IsRelated", "does the new message depend on the conversation")

    async def run(self, llm: LLM, context: ActionContext) -> str:
        earlier, text = _split(context)
        return "TRUE" if await is_related(llm, earlier, text) else "FALSE"


class Rewrite(Action):
    """As a role action: the last message made self-contained with the ones before it."""

    def __init__(self) -> None:
        super().__init__("Rewrite", "make the new message self-contained")

    async def run(self, llm: LLM, context: ActionContext) -> str:
        earlier, text = _split(context)
        return await rewrite(llm, text, earlier)


class RelateAndRewrite(Action):
    """As a role action: both in one call; the last message unchanged when unrelated."""

    def __init__(self) -> None:
        super().__init__("RelateAndRewrite", "relate and rewrite the new message in one call")

    async def run(self, llm: LLM, context: ActionContext) -> str:
        earlier, text = _split(context)
        return await relate_and_rewrite(llm, text, earlier)
