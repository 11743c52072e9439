"""The LangGraph store adapter against LangGraph's own `InMemoryStore`: the same operations give the same
items and namespaces; then what only a real index does (ranked search, TTL, sync calls from a thread)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("langgraph.store.base")

from langgraph.store.base import BaseStore, InvalidNamespaceError, Item
from langgraph.store.memory import InMemoryStore

from brain.errors import InputError
from brain.runtime import Runtime
from roles.integrations.langgraph_store import BrainStore

DOCS: list[tuple[tuple[str, ...], str, dict[str, Any]]] = [
    (("users", "u1", "memories"), "m1", {"text": "likes green tea in the morning", "kind": "pref", "n": 1}),
    (("users", "u1", "memories"), "m2", {"text": "allergic to peanuts", "kind": "health", "n": 2}),
    (("users", "u1", "profile"), "p", {"name": "Ann", "tags": ["a", "b"], "nested": {"x": 1.5}, "n": 0}),
    (("users", "u2", "memories"), "m1", {"text": "drinks black coffee", "kind": "pref", "n": 3}),
    (("docs",), "d1", {"text": "the quarterly report", "kind": "doc", "n": 4}),
    (("docs",), "d2", {"text": "the yearly report", "kind": "doc", "n": 6}),
]


def _view(result: Any) -> Any:
    """What both stores must agree on: items without their times and scores, in a stable order."""
    if isinstance(result, Item):
        return (result.namespace, result.key, result.value)
    if isinstance(result, list) and result and isinstance(result[0], Item):
        return sorted((i.namespace, i.key, repr(i.value)) for i in result)
    return result


async def _script(store: BaseStore) -> list[Any]:
    for ns, key, value in DOCS:
        await store.aput(ns, key, value)
    await store.aput(("users", "u1", "memories"), "m2", {"text": "allergic to peanuts and cats", "n": 5})
    await store.adelete(("docs",), "d1")
    await store.adelete(("docs",), "missing")
    return [
        await store.aget(("users", "u1", "memories"), "m1"),
        await store.aget(("users", "u1", "memories"), "m2"),
        await store.aget(("users", "u1", "profile"), "p"),
        await store.aget(("docs",), "d1"),
        await store.asearch(("users",), limit=10),
        await store.asearch(("users", "u1"), limit=10),
        await store.asearch(("users",), filter={"kind": "pref"}, limit=10),
        await store.asearch(("users",), filter={"n": {"$gte": 3}}, limit=10),
        await store.asearch(("users", "u2", "memories"), limit=10),
        await store.asearch(("nothing",), limit=10),
        len(await store.asearch((), limit=2)),
        len(await store.asearch((), limit=10, offset=3)),
        await store.alist_namespaces(),
        await store.alist_namespaces(prefix=("users",), max_depth=2),
        await store.alist_namespaces(suffix=("memories",)),
        await store.alist_namespaces(prefix=("users", "*", "profile")),
        await store.alist_namespaces(limit=1, offset=1),
    ]


async def test_same_results_as_langgraphs_in_memory_store(runtime: Runtime) -> None:
    ours, theirs = await _script(BrainStore(runtime)), await _script(InMemoryStore())
    assert [_view(r) for r in ours] == [_view(r) for r in theirs]
    assert ours[1].value == {"text": "allergic to peanuts and cats", "n": 5}
    assert ours[1].created_at < ours[1].updated_at  # an update keeps the creation time
    assert ours[4][0].key in {"m1", "m2", "p"}  # no query: newest updated first
    assert ours[12] == [
        ("docs",),
        ("users", "u1", "memories"),
        ("users", "u1", "profile"),
        ("users", "u2", "memories"),
    ]


async def test_search_ranks_by_the_values_text(runtime: Runtime) -> None:
    store = BrainStore(runtime, "ranked")
    for ns, key, value in DOCS:
        await store.aput(ns, key, value)
    await store.aput(("users", "u1", "memories"), "hidden", {"text": "green tea"}, index=False)
    hits = await store.asearch(("users",), query="green tea", limit=5)
    assert [h.key for h in hits] == ["m1"]
    assert hits[0].score is not None and hits[0].score > 0
    assert [h.key for h in await store.asearch(("users", "u2"), query="coffee")] == ["m1"]
    assert await store.asearch(("users", "u2"), query="tea") == []
    assert [h.key for h in await store.asearch(("users",), query="the")] != []  # only stop words: a listing
    assert await BrainStore(runtime, "other").asearch(("users",), query="tea") == []  # stores stand apart


@pytest.mark.serial
async def test_ttl_expires_items_and_reads_refresh_them(runtime: Runtime) -> None:
    store = BrainStore(runtime, "ttl", ttl={"default_ttl": 0.5 / 60, "refresh_on_read": True})
    await store.aput(("s",), "short", {"text": "short lived"})
    await store.aput(("s",), "kept", {"text": "kept"}, ttl=None)
    await store.aput(("s",), "read", {"text": "read often"})
    await asyncio.sleep(0.3)
    assert await store.aget(("s",), "read") is not None  # refreshed: another 0.5 s from now
    await asyncio.sleep(0.3)
    assert await store.aget(("s",), "short") is None
    assert await store.aget(("s",), "read") is not None
    assert await store.aget(("s",), "kept") is not None
    await asyncio.sleep(0.6)
    assert await store.sweep() == 1  # "read" expired; "short" was deleted when a read met it
    assert [i.key for i in await store.asearch(("s",))] == ["kept"]
    assert await store.alist_namespaces() == [("s",)]


async def test_sync_calls_from_a_thread_and_errors(runtime: Runtime) -> None:
    store = BrainStore(runtime, "sync")

    def worker() -> Any:
        store.put(("t",), "k", {"text": "from a thread"})
        return store.get(("t",), "k")

    item = await asyncio.to_thread(worker)
    assert item is not None and item.value == {"text": "from a thread"}
    with pytest.raises(InputError, match="async"):
        store.get(("t",), "k")
    with pytest.raises(InputError, match="JSON"):
        await store.aput(("t",), "bad", {"x": {1, 2}})
    with pytest.raises(InvalidNamespaceError):
        await store.aput(("a.b",), "k", {"x": 1})
