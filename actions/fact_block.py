"""`FactBlock`: the fact-extraction memory block of block memory (LlamaIndex's FactExtractionMemoryBlock,
without its failures). One LLM call per flush extracts the facts the flushed messages add; past
`max_facts`, one more call condenses the whole list. A condense reply that is unusable, empty or still too
long is ignored (logged): the facts are never emptied by a bad condense. The facts live in the session's
Redis state, so a restart loses nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from actions.facts import parse_facts
from actions.memory_section import TOOL_RESULT, USER_TURN, derived
from brain.errors import LLMError
from brain.llm.protocol import LLM, ChatMessage, JsonSchema
from brain.llm.tokens import Tokenizer
from brain.memory.blocks import BlockSessionStore, MemoryBlock, Record

__all__ = ["FACT_LIST", "FactBlock", "render_block_extract", "render_condense"]

_log = logging.getLogger("brain.blocks")

_REPLY = 'Reply with JSON only: {"facts": ["...", "..."]}.'
FACT_LIST = JsonSchema(
    name="facts",
    shape={
        "type": "object",
        "properties": {"facts": {"type": "array", "items": {"type": "string"}}},
        "required": ["facts"],
        "additionalProperties": False,
    },
)


def render_block_extract(transcript: str, known: Sequence[str]) -> list[ChatMessage]:
    """Extraction of the facts `transcript` adds to `known`. Pure."""
    listed = "\n".join(f"- {f}" for f in known) or "(none)"
    system = (
        "Extract specific, concrete facts the user disclosed in this conversation (preferences, personal "
        "details, plans, constraints, decisions, results of tools the user relies on). One short sentence "
        "each, in the user's language. No opinions, no summaries, nothing already in KNOWN FACTS. "
        + _REPLY
        + ' Use {"facts": []} when there is nothing new.'
    )
    user = f"KNOWN FACTS:\n{listed}\n\nCONVERSATION:\n{transcript}"
    return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]


def render_condense(facts: Sequence[str], max_facts: int) -> list[ChatMessage]:
    """Condensing the full list to at most `max_facts` facts. Pure."""
    system = (
        f"Rewrite this complete list of facts about the user as at most {max_facts} facts: merge duplicates "
        "and related facts, keep every distinct piece of information, keep the user's language. Your list "
        "replaces the old one entirely, so it must be complete. " + _REPLY
    )
    listed = "\n".join(f"- {f}" for f in facts)
    return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=listed)]


class FactBlock(MemoryBlock):
    """Facts extracted from the messages flushed out of the history."""

    source = derived(USER_TURN, TOOL_RESULT)
    lower_trust = True  # tool results count among what the facts come from

    def __init__(
        self,
        llm: LLM,
        tokenizer: Tokenizer,
        *,
        name: str = "facts",
        priority: int = 1,
        max_facts: int = 50,
    ) -> None:
        super().__init__(name, priority)
        self.llm, self.tokenizer, self.max_facts = llm, tokenizer, max_facts
        self._field = f"block:{name}"

    async def facts(self, session: BlockSessionStore) -> list[str]:
        return list(await session.get_state(self._field) or [])

    async def aput(self, session: BlockSessionStore, records: Sequence[Record]) -> None:
        lines = [f"{r.message.role}: {r.message.content}" for r in records if r.message.content]
        if not lines:
            return
        known = await self.facts(session)
        reply = await self.llm.complete(render_block_extract("\n".join(lines), known), json_schema=FACT_LIST)
        new = [f.text for f in parse_facts(reply.content or "")]
        known = await self.facts(session)  # again: another writer may have added some meanwhile
        merged = known + [f for f in dict.fromkeys(new) if f not in known]
        if len(merged) > self.max_facts:
            merged = await self._condense(merged)
        await session.set_state(self._field, merged)

    async def _condense(self, facts: list[str]) -> list[str]:
        try:
            reply = await self.llm.complete(render_condense(facts, self.max_facts), json_schema=FACT_LIST)
            condensed = list(dict.fromkeys(f.text for f in parse_facts(reply.content or "")))
        except LLMError as exc:
            _log.warning("condensing %d facts failed; keeping them all: %s", len(facts), type(exc).__name__)
            return facts
        if not condensed or len(condensed) > self.max_facts:
            _log.warning(
                "condensing %d facts gave %d (limit %d); keeping the list as it was",
                len(facts),
                len(condensed),
                self.max_facts,
            )
            return facts
        return condensed

    async def aget(
        self, session: BlockSessionStore, messages: Sequence[ChatMessage], input: str | None = None
    ) -> str:
        return "\n".join(f"- {f}" for f in await self.facts(session))

    def truncate(self, content: str, tokens: int) -> str | None:
        """The newest facts that leave at least `tokens` tokens out."""
        lines = content.split("\n")
        while lines and self.tokenizer.count("\n".join(lines)) > self.tokenizer.count(content) - tokens:
            lines.pop(0)
        return "\n".join(lines) or None
