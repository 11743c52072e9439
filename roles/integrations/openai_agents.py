"""OpenAI Agents SDK adapter (`pip install brain-assistant[agents]`): `BrainSession`, a `Session` whose items
are the turns of one brain chat, and `memory_search_tool`, a user's archival memory as a function tool.

Each item is stored as one turn: its JSON kept whole in the turn's metadata (what `get_items` gives back,
equal to what was added: messages, function calls and their outputs alike) and its readable text as the
turn's content (what summaries and search see). Turns whose text a retention policy dropped are left out."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from agents import FunctionTool, RunContextWrapper
from agents.memory import SessionSettings

from brain.errors import InputError
from brain.memory.brain_memory import BrainMemory
from brain.message import Message
from brain.runtime import Runtime
from brain.storage.conversation import Conversation, Turn
from roles.integrations.memory_search import search_archival, tiers_of

if TYPE_CHECKING:
    from agents.items import TResponseInputItem

__all__ = ["ITEM_KEY", "BrainSession", "item_message", "memory_search_tool", "message_item"]

ITEM_KEY = "openai_agents_item"
"""The metadata field of a turn that holds its item's JSON."""
_PAGE = 500
_ROLES = {"user", "assistant", "system", "developer"}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("text"))
    return ""


def item_message(item: TResponseInputItem) -> Message:
    """The turn that stores `item`: its JSON in the metadata, checked to come back equal. Pure.
    `InputError` for an item that is not a JSON object."""
    try:
        data = json.loads(json.dumps(item))
    except (TypeError, ValueError) as exc:
        raise InputError(f"a session item must be JSON: {exc}") from exc
    if not isinstance(data, dict) or data != item:
        raise InputError("a session item must be a JSON object that survives a JSON round trip")
    role = data.get("role")
    kind = data.get("type", "message")
    if role in _ROLES:
        text = _text(data.get("content"))
    elif kind == "function_call":
        text = f"{data.get('name', '')}({data.get('arguments', '')})"
    elif kind == "function_call_output":
        output = data.get("output")
        text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    else:
        text = json.dumps(data, ensure_ascii=False)
    return Message(role=role if role in _ROLES else "tool", content=text, metadata={ITEM_KEY: data})


def message_item(message: Message) -> TResponseInputItem | None:
    """The item a turn stores, or None for a turn that holds none (written by something else, or whose
    text retention dropped). Pure."""
    item = message.metadata.get(ITEM_KEY)
    return item if isinstance(item, dict) else None  # type: ignore[return-value]


def _items(turns: list[Turn]) -> list[TResponseInputItem]:
    found = (message_item(t.message) for t in turns if not t.hidden and not t.dropped)
    return [i for i in found if i is not None]


class BrainSession:
    """A `Session` (OpenAI Agents SDK) on the brain chat `(user_id, session_id)` of `runtime`'s store.

    It holds only those; every call loads the chat and writes in one atomic call, so any number of
    sessions (and processes) may share the runtime. `pop_item` takes the newest turn back (kept stored,
    hidden); `clear_session` deletes the chat. Store failures are `StoreError`s, bad items `InputError`s."""

    def __init__(self, runtime: Runtime, user_id: str, session_id: str) -> None:
        Conversation(user_id=user_id, chat_id=session_id)  # a bad id fails here, before any I/O
        self.runtime = runtime
        self.user_id = user_id
        self.session_id = session_id
        self.session_settings: SessionSettings | None = None

    async def _load(self) -> BrainMemory:
        runtime = self.runtime
        return await BrainMemory.loads(
            runtime.store,
            self.user_id,
            self.session_id,
            settings=runtime.settings.memory,
            tokenizer=runtime.tokenizer,
        )

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The newest `limit` items (all of them when None), oldest first."""
        memory = await self._load()
        if limit is not None:
            return _items(await memory.last_turns(limit)) if limit > 0 else []
        turns: list[Turn] = []
        start = 1
        while start <= memory.turn_count:
            turns += await memory.read_history(start, _PAGE)
            start += _PAGE
        return _items(turns)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append `items` in order, in one atomic write."""
        if not items:
            return
        messages = [item_message(i) for i in items]  # every item checked before anything is written
        memory = await self._load()
        for message in messages:
            memory.add_history(message)
        await memory.dumps()

    async def pop_item(self) -> TResponseInputItem | None:
        """Take back and return the newest item; None for an empty session."""
        memory = await self._load()
        taken = await memory.pop(1)
        return message_item(taken[0]) if taken else None

    async def clear_session(self) -> None:
        """Delete every item of the session."""
        await self.runtime.store.delete(Conversation(user_id=self.user_id, chat_id=self.session_id))


def memory_search_tool(
    runtime: Runtime, user_id: str, *, name: str = "search_memory", limit: int = 5
) -> FunctionTool:
    """A function tool searching `user_id`'s archival memory (hybrid with an embedding model, lexical
    otherwise). It answers a JSON list of `{"text", "score", "ts"}`; a query with nothing to search for
    answers the reason, for the model to see. `ConfigError` now for a runtime without Redis."""
    tiers = tiers_of(runtime)

    async def invoke(_: RunContextWrapper[Any], arguments: str) -> str:
        try:
            parsed = json.loads(arguments or "{}")
            query = str(parsed.get("query", "")) if isinstance(parsed, dict) else ""
            hits = await search_archival(tiers, user_id, query, limit)
        except (ValueError, InputError) as exc:
            return f"search failed: {exc}"
        return json.dumps([{"text": h.text, "score": round(h.score, 4), "ts": h.ts} for h in hits])

    return FunctionTool(
        name=name,
        description="Search the user's long-term memory (archived notes and documents) for a query.",
        params_json_schema={
            "type": "object",
            "properties": {"query": {"type": "string", "description": "what to look for"}},
            "required": ["query"],
            "additionalProperties": False,
        },
        on_invoke_tool=invoke,
    )
