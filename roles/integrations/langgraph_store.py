"""LangGraph adapter (`pip install brain-assistant[langgraph]`): `BrainStore`, a `BaseStore` whose items
live in one brain search index in Redis (`brain.keys.store_base`), searched by BM25, fused with vectors
when the runtime has an embedding model (the same hybrid search as archival memory).

An item is one document: its value (JSON, kept whole), namespace, key, times and expiry in the document's
metadata; its text (the value's strings, or the `fields` given) is what search ranks. Without a query,
search lists the newest updated first. A put replaces the document (a delete, then an add: a reader in
between misses the item). TTLs are in minutes: an expired item is never returned and is deleted when a read
meets it, or by `sweep()`. `list_namespaces` and `sweep` read every document (not for hot paths)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    NotProvided,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)
from langgraph.store.memory import _compare_values, _does_match

from brain.errors import InputError
from brain.keys import store_base
from brain.runtime import Runtime
from brain.search.index import IndexedDoc, SearchIndex
from roles.integrations.memory_search import tiers_of
from roles.integrations.store_items import (
    doc_id,
    expired,
    indexed_text,
    namespace_tag,
    record_doc,
    value_json,
)

__all__ = ["BrainStore"]

_PAGE = 100


def _item(doc: IndexedDoc, score: float | None = None, *, search: bool = False) -> Item:
    r = doc.metadata
    ns, created, updated = tuple(r["ns"]), datetime.fromisoformat(r["created_at"]), r["updated_at"]
    if search:
        return SearchItem(ns, r["key"], r["value"], created, datetime.fromisoformat(updated), score)
    return Item(value=r["value"], key=r["key"], namespace=ns, created_at=created, updated_at=updated)


class BrainStore(BaseStore):
    """A LangGraph `BaseStore` named `name` on `runtime`'s Redis (its prefix, its embedding model).

    It holds only its configuration; every operation reads and writes Redis. Use it from the event loop it
    was made in (`abatch`, `aget`, `aput`, ...); the sync methods work from other threads (LangGraph's sync
    nodes) by running there, and are an `InputError` on the loop's own thread. Store failures are
    `StoreError`s; a value that is not JSON, an `InputError`."""

    supports_ttl = True

    def __init__(
        self,
        runtime: Runtime,
        name: str = "langgraph",
        *,
        fields: Sequence[str] | None = None,
        ttl: TTLConfig | None = None,
    ) -> None:
        tiers = tiers_of(runtime)
        self.tiers = tiers
        self.index: SearchIndex = tiers.index(store_base(runtime.settings.redis.key_prefix, name))
        self.fields = tuple(fields) if fields is not None else None
        self.ttl_config = ttl
        try:
            self.loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self.loop = None

    # ------------------------------------------------------------------ batches

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        loop = self.loop
        if loop is None:
            raise InputError("make the BrainStore inside the event loop that runs the graph, or use abatch")
        try:
            if asyncio.get_running_loop() is loop:
                raise InputError("a sync BrainStore call on its event loop's thread: use the async methods")
        except RuntimeError:
            pass
        return asyncio.run_coroutine_threadsafe(self.abatch(ops), loop).result()

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Each op in order (a later op sees what an earlier one wrote)."""
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(await self._get(op))
            elif isinstance(op, SearchOp):
                results.append(await self._search(op))
            elif isinstance(op, PutOp):
                await self._put(op)
                results.append(None)
            elif isinstance(op, ListNamespacesOp):
                results.append(await self._namespaces(op))
            else:
                raise InputError(f"unknown store operation {type(op).__name__}")
        return results

    # ------------------------------------------------------------------ operations

    def _refresh(self, refresh_ttl: bool) -> bool:
        config = self.ttl_config
        return refresh_ttl and (config is None or config.get("refresh_on_read", True))

    async def _live(self, doc: IndexedDoc | None, refresh: bool) -> IndexedDoc | None:
        """`doc` unless it expired (then deleted); its expiry moved on when `refresh` asks."""
        if doc is None:
            return None
        now = time.time()
        if expired(doc.metadata, now):
            await self.index.delete(doc.id)
            return None
        ttl = doc.metadata.get("ttl")
        if refresh and ttl is not None:
            r = doc.metadata
            renewed = {**r, "expires_at": now + float(ttl) * 60}
            doc = doc.model_copy(update={"metadata": renewed})
            await self.index.delete(doc.id)
            await self.index.add(doc, await self.tiers.vector(doc.text) if doc.text.strip() else None)
        return doc

    async def _get(self, op: GetOp) -> Item | None:
        doc = await self._live(
            await self.index.get(doc_id(op.namespace, op.key)), self._refresh(op.refresh_ttl)
        )
        return _item(doc) if doc is not None else None

    async def _put(self, op: PutOp) -> None:
        existing = await self.index.get(doc_id(op.namespace, op.key))
        if op.value is None:
            if existing is not None:
                await self.index.delete(existing.id)
            return
        value = value_json(dict(op.value))
        ttl = op.ttl
        if isinstance(ttl, NotProvided):
            ttl = (self.ttl_config or {}).get("default_ttl")
        now = time.time()
        live = existing is not None and not expired(existing.metadata, now)
        created = existing.metadata["created_at"] if live and existing is not None else None
        text = "" if op.index is False else indexed_text(value, self.fields if op.index is None else op.index)
        doc = record_doc(
            op.namespace,
            op.key,
            value,
            text=text,
            created_at=created or datetime.fromtimestamp(now, UTC).isoformat(),
            now=now,
            ttl=ttl,
        )
        if existing is not None:
            await self.index.delete(existing.id)
        await self.index.add(doc, await self.tiers.vector(text) if text.strip() else None)

    async def _search(self, op: SearchOp) -> list[SearchItem]:
        tags = [namespace_tag(op.namespace_prefix)] if op.namespace_prefix else []
        query = (op.query or "").strip()
        vector = await self.tiers.vector(query) if query else None
        found: list[SearchItem] = []
        wanted, offset, refresh = op.offset + op.limit, 0, self._refresh(op.refresh_ttl)
        while len(found) < wanted:
            try:
                hits, _ = await self.index.search(query, tags=tags, offset=offset, limit=_PAGE, vector=vector)
            except InputError:  # only stop words: list instead, as LangGraph's stores do without a query
                query, vector = "", None
                continue
            for hit in hits:
                value = hit.doc.metadata["value"]
                if op.filter and not all(_compare_values(value.get(k), v) for k, v in op.filter.items()):
                    continue
                if (doc := await self._live(hit.doc, refresh)) is not None:
                    found.append(_search_item(doc, hit.score if query else None))
            if len(hits) < _PAGE:
                break
            offset += _PAGE
        return found[op.offset : wanted]

    async def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        now = time.time()
        spaces = {
            tuple(d.metadata["ns"]) for d in await self.index.all_docs() if not expired(d.metadata, now)
        }
        matching = [s for s in spaces if all(_does_match(c, s) for c in op.match_conditions or ())]
        if op.max_depth is not None:
            matching = [s[: op.max_depth] for s in matching]
        return sorted(set(matching))[op.offset : op.offset + op.limit]

    async def sweep(self) -> int:
        """Delete every expired item now; how many."""
        now = time.time()
        gone = [d.id for d in await self.index.all_docs() if expired(d.metadata, now)]
        for doc in gone:
            await self.index.delete(doc)
        return len(gone)


def _search_item(doc: IndexedDoc, score: float | None) -> SearchItem:
    item = _item(doc, score, search=True)
    assert isinstance(item, SearchItem)
    return item
