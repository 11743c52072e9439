"""Core blocks and archival memory as the service serves them, per scope (`MemoryService.tiered_memory`).

Core blocks are laid out as the tiered mode lays them out (the assistant's own `TieredMode`, else the
default one): each scope reads and edits its own copies, the persona included, and sees the defaults until
its first edit (`roles.access.tenant_of`). Archival memory is the user's one index (`Tiers.archival`): a
scope sees and deletes its passages as `roles.access` says (an agent: the shared ones and its own; it
deletes only its own). Every write holds the user's erasure ticket (`brain.storage.fence`). No error
names what a request gave.
"""

from __future__ import annotations

import re
import unicodedata
import uuid
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime

from brain.errors import InputError, NotFoundError
from brain.keys import check_id
from brain.memory.core import Block, BlockLimitError, Place, edit_block, tenant_blocks
from brain.memory.tiers import Tiers
from brain.message import check_text
from brain.search.analysis import searchable
from brain.search.index import Hit, IndexedDoc
from brain.storage import fence
from brain.storage.blocks import CoreBlockStore
from brain.wire import MAX_PASSAGE_BYTES, MAX_QUERY_BYTES, MAX_TAGS, TAG_PATTERN, Passage
from roles.access import PASSAGE_AGENT, Scope, deletes_passage, passage_agent, passage_sees
from roles.assistant import Assistant
from roles.modes.tiered import TieredMode

__all__ = [
    "MAX_PASSAGE_BYTES",
    "MAX_QUERY_BYTES",
    "MAX_TAGS",
    "TAG_PATTERN",
    "Passage",
    "TieredMemory",
]

_TAG = re.compile(TAG_PATTERN)
_SCAN = 2_000  # the most passages an agent scope's search or listing looks through for its visible ones
_LAYOUT = TieredMode()  # the blocks of an assistant in another mode: the tiered mode's defaults


def _passage(hit: Hit | IndexedDoc) -> Passage:
    doc, score = (hit.doc, hit.score) if isinstance(hit, Hit) else (hit, None)
    return Passage(
        id=doc.id,
        text=doc.text,
        tags=doc.tags,
        source=doc.source,
        at=datetime.fromtimestamp(doc.ts, UTC).isoformat(timespec="seconds"),
        agent=passage_agent(doc),
        score=round(score, 4) if score is not None else None,
    )


def _tags(tags: Sequence[str]) -> tuple[str, ...]:
    """`tags` if an index takes them as they are (`TAG_PATTERN`, at most `MAX_TAGS`); `InputError`."""
    if len(tags) > MAX_TAGS:
        raise InputError(f"at most {MAX_TAGS} tags")
    if not all(isinstance(t, str) and _TAG.fullmatch(t) for t in tags):
        raise InputError("a tag is 1 to 64 characters without spaces, ':' or control characters")
    return tuple(dict.fromkeys(tags))


def _sized(text: str, most: int, what: str) -> str:
    """`text` if it is text (`check_text`) of at most `most` UTF-8 bytes; `InputError` naming the limit."""
    size = len(check_text(text, 1 << 30, what).encode())
    if size > most:
        raise InputError(f"a {what} is at most {most:,} bytes (UTF-8); this one is {size:,}")
    return text


def _bounds(limit: int, offset: int = 0, *, most: int = 100) -> None:
    if not 1 <= limit <= most:
        raise InputError(f"limit must be from 1 to {most}")
    if not 0 <= offset <= 10_000:
        raise InputError("offset must be from 0 to 10000")


Fetch = Callable[[int, int], Awaitable[tuple[list[Hit], int]]]
"""(offset, limit) -> one page of an index's hits and how many there are in all."""


class TieredMemory:
    """Core blocks and archival memory of one assistant, served per scope. Holds nothing per call."""

    def __init__(self, assistant: Assistant) -> None:
        self.assistant = assistant

    @property
    def tiers(self) -> Tiers:
        tiers = self.assistant.runtime.tiers
        if tiers is None:
            raise InputError("memory beyond chats needs a backend (Redis, or memory)")
        return tiers

    # ------------------------------------------------------------------ core blocks

    async def _places(self, scope: Scope) -> dict[str, Place]:
        engine = await self.assistant.ready()
        layout = engine.mode if isinstance(engine.mode, TieredMode) else _LAYOUT
        return layout.places(engine, scope.user, scope.agent)

    async def core_blocks(self, scope: Scope) -> list[Block]:
        """Every core block the scope reaches, persona included: its own copy of each block of the layout,
        else the default; then any other block stored in its own scopes. Writes nothing."""
        places = await self._places(scope)
        core = self.tiers.core
        shown = await tenant_blocks(core, places)
        labels = {b.label for b in shown}
        for own in dict.fromkeys(p.scope for p in places.values()):
            for block in await core.list(own):
                if block.label not in labels:
                    shown.append(block)
                    labels.add(block.label)
        return shown

    async def edit_core_block(self, scope: Scope, label: str, value: str) -> Block:
        """Set the scope's own copy of block `label` to `value` (copied from the default first); the block.
        `NotFoundError` for a label outside the layout; `InputError` for a read-only block or a value past
        the block's limit (nothing changes then)."""
        return await self._edit_core(scope, label, value, lambda core, own: core.set(own, label, value))

    async def replace_in_core_block(self, scope: Scope, label: str, old: str, new: str) -> Block:
        """Replace the first occurrence of `old` (non-empty, exact) in the scope's own copy of block `label`
        by `new`, atomically (a concurrent edit is never lost: `old` is looked for in the block as it is
        then); the block. Errors as `edit_core_block`'s, and `InputError` when `old` is not in the block."""
        return await self._edit_core(
            scope, label, new, lambda core, own: core.replace(own, label, old, new), whole=False
        )

    async def _edit_core(
        self,
        scope: Scope,
        label: str,
        text: str,
        edit: Callable[[CoreBlockStore, bytes], Awaitable[Block]],
        whole: bool = True,
    ) -> Block:
        """`edit(core, own scope)` of block `label` after the checks of an edit writing `text` (the whole
        value, or the new text of a replacement)."""
        ticket = await self.tiers.backend.erasure.ticket(
            scope.user
        )  # before reading: `MemoryService._ticket`
        places = await self._places(scope)
        core = self.tiers.core
        current = {b.label: b for b in await tenant_blocks(core, places)}.get(label)
        if current is None:
            raise NotFoundError(
                "there is no core memory block with this label; GET /v1/core-blocks lists them"
            )
        if current.read_only:
            raise InputError("this core memory block is read-only")
        if not _plain_text(text):
            raise InputError("the value must be text without control characters (newlines and tabs are fine)")
        if len(text) > current.limit:
            raise BlockLimitError(f"the value has {len(text)} characters; this block holds {current.limit}")
        with fence.holding(ticket):
            try:
                return await edit_block(core, places, label, lambda own: edit(core, own))
            except BlockLimitError as exc:  # a replacement made it too long, or its limit changed meanwhile
                raise BlockLimitError(
                    str(exc) if not whole else "the value is past this block's limit"
                ) from None

    # ------------------------------------------------------------------ archival memory

    async def archival_insert(self, scope: Scope, text: str, tags: Sequence[str] = ()) -> Passage:
        """Store `text` as one passage of the user's archival memory (an agent scope's: its own); the
        passage stored."""
        text = _sized(text, MAX_PASSAGE_BYTES, "passage").strip()
        doc = IndexedDoc(
            id=uuid.uuid4().hex,
            text=text,
            tags=_tags(tags),
            source=scope.actor,
            metadata={PASSAGE_AGENT: scope.agent} if scope.agent else {},
        )
        tiers = self.tiers
        ticket = await tiers.backend.erasure.ticket(scope.user)
        archival = tiers.archival(scope.user)
        vector = await tiers.vector(archival.indexed_text(doc))
        with fence.holding(ticket):
            await archival.add(doc, vector)
        stored = await archival.get(doc.id)
        return _passage(stored or doc)

    async def archival_search(
        self, scope: Scope, query: str, *, limit: int = 10, tags: Sequence[str] = ()
    ) -> list[Passage]:
        """The passages the scope sees matching `query` (words, and meaning with embeddings), best first."""
        _sized(query, MAX_QUERY_BYTES, "query")
        _bounds(limit, most=50)
        wanted = _tags(tags)
        tiers = self.tiers
        vector = await tiers.vector(query)
        if vector is None and not searchable(query):
            raise InputError("nothing to search for in the query: only stop words or punctuation")
        archival = tiers.archival(scope.user)

        async def fetch(offset: int, size: int) -> tuple[list[Hit], int]:
            return await archival.search(query, tags=wanted, offset=offset, limit=size, vector=vector)

        return [_passage(h) for h in await _visible(scope, fetch, 0, limit)]

    async def archival_list(
        self, scope: Scope, *, limit: int = 100, offset: int = 0, tags: Sequence[str] = ()
    ) -> list[Passage]:
        """The passages the scope sees, newest first: `limit` of them after the first `offset`."""
        _bounds(limit, offset)
        wanted = _tags(tags)
        archival = self.tiers.archival(scope.user)

        async def fetch(start: int, size: int) -> tuple[list[Hit], int]:
            return await archival.search("", tags=wanted, offset=start, limit=size)

        return [_passage(h) for h in await _visible(scope, fetch, offset, limit)]

    async def archival_delete(self, scope: Scope, passage_id: str) -> Passage:
        """Delete a passage for good; the passage deleted. `NotFoundError` for one the scope does not see
        (as for one that does not exist); `InputError` for a shared one asked by an agent scope."""
        check_id(passage_id, "passage_id")
        tiers = self.tiers
        ticket = await tiers.backend.erasure.ticket(scope.user)
        archival = tiers.archival(scope.user)
        doc = await archival.get(passage_id)
        if doc is None or not passage_sees(scope, doc):
            raise NotFoundError("there is no archival passage with this passage_id")
        if not deletes_passage(scope, doc):
            raise InputError(
                "an agent's key deletes only the passages it stored; a shared one needs the user's key"
            )
        with fence.holding(ticket):
            await archival.delete(passage_id)
        return _passage(doc)


def _plain_text(value: str) -> bool:
    """No control character but newlines and tabs, no lone surrogate."""
    return all(c in "\n\t" or unicodedata.category(c) not in ("Cc", "Cs") for c in value)


async def _visible(scope: Scope, fetch: Fetch, offset: int, limit: int) -> list[Hit]:
    """`limit` hits the scope sees after the first `offset` of them, in `fetch`'s order. A user-wide scope
    sees every passage (one page); an agent scope's are gathered page by page, among the first `_SCAN`."""
    if scope.agent is None:
        hits, _ = await fetch(offset, limit)
        return hits
    seen: dict[str, Hit] = {}
    start, size = 0, max(2 * (offset + limit), 50)
    while len(seen) < offset + limit and start < _SCAN + offset:
        hits, total = await fetch(start, size)
        seen.update((h.doc.id, h) for h in hits if passage_sees(scope, h.doc) and h.doc.id not in seen)
        start += size
        if not hits or start >= total:
            break
    return list(seen.values())[offset : offset + limit]
