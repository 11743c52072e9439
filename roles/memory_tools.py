"""MemGPT's memory tools over core memory, archival memory and recall memory.

Each tool takes `request_heartbeat`: true asks for another step after the result (bounded by the step cap).
Bad arguments and failed edits come back as tool errors the model sees, never as exceptions. Core memory
edits reach only the tenant's own copy of a block (`brain.memory.core.edit_block`), never a default.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from brain.errors import InputError
from brain.jsontext import model_json
from brain.llm.protocol import Embed, ToolCall, ToolSpec, embed_one
from brain.memory.core import Place, edit_block
from brain.search.index import Hit, IndexedDoc, SearchIndex
from brain.storage.blocks import Block, CoreBlockStore
from roles.skills import check_arguments

__all__ = ["GRAPH_SEARCH", "GraphLookup", "Linked", "MemoryTools", "ToolOutcome"]

_HEARTBEAT = {"type": "boolean", "description": "true to think again after seeing the result"}
_DATE = "an ISO date, YYYY-MM-DD"


def _spec(name: str, description: str, properties: dict[str, Any], required: list[str]) -> ToolSpec:
    return ToolSpec(
        name=name,
        description=description,
        parameters={
            "type": "object",
            "properties": {**properties, "request_heartbeat": _HEARTBEAT},
            "required": required,
            "additionalProperties": False,
        },
    )


SPECS = [
    _spec("send_message", "Send a message to the user.", {"message": {"type": "string"}}, ["message"]),
    _spec(
        "core_memory_append",
        "Append text to a core memory block.",
        {"label": {"type": "string"}, "content": {"type": "string"}},
        ["label", "content"],
    ),
    _spec(
        "core_memory_replace",
        "Replace exact text in a core memory block (empty new text deletes it).",
        {"label": {"type": "string"}, "old_content": {"type": "string"}, "new_content": {"type": "string"}},
        ["label", "old_content", "new_content"],
    ),
    _spec(
        "archival_memory_insert",
        "Store a passage in long-term archival memory.",
        {"content": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}},
        ["content"],
    ),
    _spec(
        "archival_memory_search",
        "Search archival memory by words and meaning; each passage is indexed with the day it was stored, "
        "so a day or month in the query helps. Narrow with tags and a date range (start_date/end_date).",
        {
            "query": {"type": "string", "description": "what to find; may name a day, e.g. 7 February 2022"},
            "page": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "start_date": {"type": "string", "description": _DATE},
            "end_date": {"type": "string", "description": _DATE + ", included"},
        },
        ["query"],
    ),
    _spec(
        "conversation_search",
        "Search past messages of this conversation by words and meaning. Each message is indexed with its "
        'speaker and day, so name them in the query ("what did Ann say about the cake in May 2022"), and '
        "narrow with role (only the user's or your own messages) and a date range (start_date/end_date).",
        {
            "query": {"type": "string"},
            "start_date": {"type": "string", "description": _DATE},
            "end_date": {"type": "string", "description": _DATE + ", included"},
            "role": {"type": "string", "enum": ["user", "assistant"]},
            "page": {"type": "integer"},
        },
        ["query"],
    ),
    _spec(
        "conversation_search_date",
        "List past messages between two ISO dates (YYYY-MM-DD), newest first, without a query.",
        {"start_date": {"type": "string"}, "end_date": {"type": "string"}, "page": {"type": "integer"}},
        ["start_date", "end_date"],
    ),
]


Linked = Callable[[str, Sequence[float] | None], Awaitable[list[str]]]
"""Given a query (and its embedding), the ids of the turns that what memory knows about it (facts) was
learned from; conversation search raises them in its ranking."""


class ToolOutcome(BaseModel):
    model_config = ConfigDict(frozen=True)

    result: str
    heartbeat: bool = False
    message: str | None = None  # what send_message said to the user
    failed: bool = False


def _date(value: Any, end: bool = False) -> float | None:
    if value in (None, ""):
        return None
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        raise InputError(f"{value!r} is not an ISO date like 2026-05-01") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    if end and len(str(value)) <= 10:
        return parsed.timestamp() + 86_400 - 1e-6  # the whole end day
    return parsed.timestamp()


def _page(hits: list[Hit], total: int, page: int, size: int) -> str:
    items = [
        {
            "id": h.doc.id,
            "text": h.doc.text,
            "timestamp": datetime.fromtimestamp(h.doc.ts, UTC).isoformat(timespec="seconds"),
            "score": round(h.score, 4),
            **({"tags": list(h.doc.tags)} if h.doc.tags else {}),
        }
        for h in hits
    ]
    pages = max((total + size - 1) // size, 1)
    return model_json({"results": items, "page": page, "pages": pages, "total": total})


GRAPH_SEARCH = _spec(
    "graph_search",
    "Look up a person, place or thing in the knowledge graph learned from past conversations: its "
    "relations to others (who is whose sister, who lives where), as they are now or as they were on a "
    "date. Follow a relation by searching for the entity at its other end.",
    {
        "entity": {"type": "string", "description": "a name or alias"},
        "as_of": {"type": "string", "description": _DATE},
    },
    ["entity"],
)

_SCAN = 2_000
"""The most hits an agent's archival search looks through for those it may see."""

GraphLookup = Callable[[str, float | None], Awaitable[dict[str, Any]]]
"""(entity name, as of or None) -> what the graph holds about it (`TieredMode.graph_lookup`)."""


class MemoryTools:
    """The tool set of one agent for one tenant: the tenant's core blocks (`places`), archival index and
    recall index."""

    def __init__(
        self,
        core: CoreBlockStore,
        places: Mapping[str, Place],
        archival: SearchIndex,
        recall: SearchIndex,
        *,
        page_size: int = 5,
        embed: Embed | None = None,
        linked: Linked | None = None,
        graph: GraphLookup | None = None,
        passage_metadata: Mapping[str, Any] | None = None,
        visible: Callable[[IndexedDoc], bool] | None = None,
        asked_at: float | None = None,
    ) -> None:
        self.asked_at = asked_at  # the turn's time: "yesterday" in a search is the day before it (None: now)
        self.core, self.places, self.archival, self.recall = core, dict(places), archival, recall
        self.page_size, self.embed, self.linked, self.graph = page_size, embed, linked, graph
        # an agent's tools: its passages are marked as its own, and it sees only those it may
        self.passage_metadata, self.visible = dict(passage_metadata or {}), visible
        self._handlers: dict[str, Callable[[dict[str, Any]], Awaitable[ToolOutcome]]] = {
            "send_message": self._send_message,
            "core_memory_append": self._append,
            "core_memory_replace": self._replace,
            "archival_memory_insert": self._insert,
            "archival_memory_search": self._archival_search,
            "conversation_search": self._conversation_search,
            "conversation_search_date": self._conversation_date,
        }
        if graph is not None:
            self._handlers["graph_search"] = self._graph_search

    @property
    def specs(self) -> list[ToolSpec]:
        return [*SPECS, GRAPH_SEARCH] if self.graph is not None else list(SPECS)

    def handles(self, name: str) -> bool:
        return name in self._handlers

    async def invoke(self, call: ToolCall) -> ToolOutcome:
        handler = self._handlers.get(call.name)
        if handler is None:
            return ToolOutcome(result=f"error: unknown tool {call.name!r}", heartbeat=True, failed=True)
        try:
            arguments = json.loads(call.arguments or "{}")
        except ValueError:
            return ToolOutcome(
                result=f"error: the arguments of {call.name} are not valid JSON", heartbeat=True, failed=True
            )
        spec = next(s for s in self.specs if s.name == call.name)
        complaint = check_arguments(spec.parameters, arguments)
        if complaint is not None:
            return ToolOutcome(result=f"error: {call.name}: {complaint}", heartbeat=True, failed=True)
        heartbeat = bool(arguments.pop("request_heartbeat", False))
        try:
            outcome = await handler(arguments)
        except InputError as exc:  # an over-limit edit, a bad date, ...: the model sees it and can fix it
            return ToolOutcome(result=f"error: {exc}", heartbeat=True, failed=True)
        return outcome.model_copy(update={"heartbeat": heartbeat or outcome.heartbeat})

    async def vector(self, text: str) -> list[float] | None:
        return await embed_one(self.embed, text)

    async def _send_message(self, a: dict[str, Any]) -> ToolOutcome:
        return ToolOutcome(result="sent", message=a["message"])

    async def _edit(self, label: str, edit: Callable[[bytes], Awaitable[Block]]) -> ToolOutcome:
        block = await edit_block(self.core, self.places, label, edit)
        return ToolOutcome(result=f"ok: {label} has {len(block.value)} of {block.limit} characters")

    async def _append(self, a: dict[str, Any]) -> ToolOutcome:
        label = a["label"]
        return await self._edit(label, lambda scope: self.core.append(scope, label, a["content"]))

    async def _replace(self, a: dict[str, Any]) -> ToolOutcome:
        label, old, new = a["label"], a["old_content"], a["new_content"]
        return await self._edit(label, lambda scope: self.core.replace(scope, label, old, new))

    async def _insert(self, a: dict[str, Any]) -> ToolOutcome:
        doc = IndexedDoc(
            id=uuid.uuid4().hex,
            text=a["content"],
            tags=tuple(a.get("tags") or ()),
            source="agent",
            metadata=self.passage_metadata,
        )
        await self.archival.add(doc, await self.vector(self.archival.indexed_text(doc)))
        return ToolOutcome(result=f"ok: stored passage {doc.id}")

    async def _archival_search(self, a: dict[str, Any]) -> ToolOutcome:
        return await self._search(self.archival, a, a.get("tags") or (), None, self.visible)

    async def _conversation_search(self, a: dict[str, Any]) -> ToolOutcome:
        return await self._search(self.recall, a, [a["role"]] if a.get("role") else (), self.linked)

    async def _search(
        self,
        index: SearchIndex,
        a: dict[str, Any],
        tags: Sequence[str],
        linked: Linked | None,
        visible: Callable[[IndexedDoc], bool] | None = None,
    ) -> ToolOutcome:
        """One page of `index`'s hits for the tool arguments `a` (query, page, start_date, end_date); with
        `visible`, of the hits it keeps (among the best `_SCAN`)."""
        page = max(int(a.get("page") or 0), 0)
        vector = await self.vector(a["query"])
        offset, limit = (0, _SCAN) if visible is not None else (page * self.page_size, self.page_size)
        hits, total = await index.search(
            a["query"],
            tags=tags,
            start=_date(a.get("start_date")),
            end=_date(a.get("end_date"), end=True),
            offset=offset,
            limit=limit,
            vector=vector,
            linked=await linked(a["query"], vector) if linked is not None else (),
            asked_at=self.asked_at,
        )
        if visible is not None:
            kept = [h for h in hits if visible(h.doc)]
            start = page * self.page_size
            hits, total = kept[start : start + self.page_size], len(kept)
        return ToolOutcome(result=_page(hits, total, page, self.page_size))

    async def _graph_search(self, a: dict[str, Any]) -> ToolOutcome:
        assert self.graph is not None  # registered only with a graph
        as_of = _date(a.get("as_of"), end=True)
        return ToolOutcome(result=model_json(await self.graph(a["entity"], as_of)))

    async def _conversation_date(self, a: dict[str, Any]) -> ToolOutcome:
        page = max(int(a.get("page") or 0), 0)
        hits, total = await self.recall.search(
            "",
            start=_date(a["start_date"]),
            end=_date(a["end_date"], end=True),
            offset=page * self.page_size,
            limit=self.page_size,
        )
        return ToolOutcome(result=_page(hits, total, page, self.page_size))
