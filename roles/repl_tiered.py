"""The REPL's commands for the tiered memory mode: /core and /archival."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from brain.search_index import IndexedDoc
from roles.tiered import TieredAssistant

if TYPE_CHECKING:
    from roles.repl import ChatSession

__all__ = ["archival", "core"]


def _tiered(s: ChatSession) -> TieredAssistant | None:
    if isinstance(s.assistant, TieredAssistant):
        return s.assistant
    s.say("this needs the tiered memory mode: set memory.mode: tiered")
    return None


async def core(s: ChatSession, _: str) -> bool:
    if (agent := _tiered(s)) is not None:
        for block in await agent.core_blocks():
            s.say(f"[{block.label}] {len(block.value)}/{block.limit} characters: {block.value or '(empty)'}")
    return True


async def archival(s: ChatSession, arg: str) -> bool:
    verb, _, text = arg.partition(" ")
    if verb not in {"search", "add"} or not text.strip():
        s.say("usage: /archival search QUERY, or /archival add TEXT")
        return True
    if (agent := _tiered(s)) is None:
        return True
    await agent.load_memory(s.user_id, s.chat_id)
    tools = agent.tools()
    if verb == "add":
        doc = IndexedDoc(id=uuid.uuid4().hex, text=text.strip(), source="user")
        await tools.archival.add(doc, await tools.vector(doc.text))
        s.say("stored in archival memory")
        return True
    hits, total = await tools.archival.search(text, limit=5, vector=await tools.vector(text))
    s.say(f"{total} passage(s) match" + (":" if hits else ""))
    for hit in hits:
        s.say(f"- {hit.doc.text} (score {hit.score:.3f})")
    return True
