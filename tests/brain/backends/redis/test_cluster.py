"""Redis Cluster: three real redis-server nodes; every conversation's keys live in one slot."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from actions.summarizer import Summarizer
from brain import BrainMemory, Message, RedisConnection, RedisMemoryStore, Settings
from brain.backends.redis import RedisBackend
from brain.keys import archived_key
from brain.storage.conversation import Conversation
from brain.testing import ScriptedLLM
from brain.testing.conformance.erasure import ErasureStoreConformance
from brain.testing.conformance.fact_writes import FactWriteConformance
from brain.testing.conformance.keys import ApiKeyStoreConformance
from brain.testing.conformance.queue import FactQueueConformance
from tests.support.cluster import cluster_ports
from tests.support.servers import RedisServerProcess
from tests.support.stores import redis_index, redis_tiers


@pytest.fixture(scope="module")
def cluster_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    base = tmp_path_factory.mktemp("cluster")
    nodes = [
        RedisServerProcess(
            base / str(port),
            port=port,
            appendonly=False,
            extra=("--cluster-enabled", "yes", "--cluster-config-file", str(base / f"{port}.conf")),
        )
        for port in cluster_ports(3)
    ]
    for node in nodes:
        node.start()
    try:
        subprocess.run(
            [
                "redis-cli",
                "--cluster",
                "create",
                *(f"127.0.0.1:{n.port}" for n in nodes),
                "--cluster-replicas",
                "0",
                "--cluster-yes",
            ],
            check=True,
            capture_output=True,
            timeout=60,
        )
        for _ in range(100):  # wait until every node agrees the cluster is up
            states = [
                subprocess.run(
                    ["redis-cli", "-p", str(n.port), "cluster", "info"], capture_output=True, text=True
                ).stdout
                for n in nodes
            ]
            if all("cluster_state:ok" in s for s in states):
                break
            subprocess.run(["sleep", "0.1"], check=True)
        yield f"redis://127.0.0.1:{nodes[0].port}/0"
    finally:
        for node in nodes:
            node.stop()


async def test_memory_on_a_cluster(cluster_url: str, tmp_path: Path) -> None:
    settings = Settings.model_validate(
        {"home": str(tmp_path), "redis": {"url": cluster_url, "cluster": True}}
    )
    async with await RedisConnection.open(settings) as connection:
        store = RedisMemoryStore(connection.client)
        chats = [f"chat-{i}" for i in range(12)] + ["{tag}", "a:b*", "x" * 5_000]  # spread over many slots
        for chat in chats:
            memory = await BrainMemory.loads(store, "user", chat)
            for i in range(5):
                memory.add_talk(Message(content=f"{chat} turn {i}"))
            await memory.dumps()
        for chat in chats:
            memory = await BrainMemory.loads(store, "user", chat)
            assert [m.content for m in memory.history] == [f"{chat} turn {i}" for i in range(5)]
            assert (
                await memory.summarize(Summarizer(ScriptedLLM([f"summary of {chat[:10]}"])))
                == f"summary of {chat[:10]}"
            )
            assert len(await memory.read_history(1, 10)) == 5
        slots = {
            await connection.client.cluster_keyslot(store.keys(Conversation("user", c)).meta) for c in chats
        }
        assert len(slots) > 3  # the conversations really are spread over the nodes' slots


async def test_search_index_on_a_cluster(cluster_url: str, tmp_path: Path) -> None:
    from brain.keys import archival_base
    from brain.search.index import IndexedDoc

    settings = Settings.model_validate(
        {"home": str(tmp_path), "redis": {"url": cluster_url, "cluster": True}}
    )
    async with await RedisConnection.open(settings) as connection:
        for tenant in ("alice", "bob", "carol"):
            index = redis_index(connection.client, archival_base("brain", tenant))
            await index.add(IndexedDoc(id="1", text=f"{tenant} likes green tea", tags=("drinks",)))
            await index.add(IndexedDoc(id="2", text=f"{tenant} booked a flight"))
            hits, total = await index.search("tea", tags=["drinks"])
            assert total == 1 and hits[0].doc.text == f"{tenant} likes green tea"
            assert await index.delete("1")
            await index.drop()
            assert await index.count() == 0


async def test_a_cold_user_leaves_a_cluster_and_comes_back(cluster_url: str, tmp_path: Path) -> None:
    """The cold archive on a Cluster: the user's namespaces live in several slots; archived, only the
    marker stays; brought back, every key (value and expiry) is as it was, and search finds the turns."""
    from brain.backends.redis.archive_store import DirectoryStore
    from brain.memory.facts import Fact
    from brain.memory.recall import recall_doc
    from brain.storage.conversation import WriteBatch

    settings = Settings.model_validate(
        {"home": str(tmp_path), "redis": {"url": cluster_url, "cluster": True}}
    )
    async with await RedisConnection.open(settings) as connection:
        client = connection.client
        backend = RedisBackend(client, prefix="cold", archive_store=DirectoryStore(tmp_path / "archive"))
        tiers = redis_tiers(client, prefix="cold")
        tiers.backend.archive = backend.archive
        for chat in ("trip", "work"):
            conv = Conversation("ann", chat)
            messages = [Message(content=f"{chat} note {i}: the ferry leaves at nine") for i in range(5)]
            await backend.conversations.write(conv, WriteBatch(turns=tuple((m, 9) for m in messages)))
            await tiers.recall("ann", chat).add_many([recall_doc(m, i + 1) for i, m in enumerate(messages)])
        await tiers.facts.add("ann", Fact(text="Ann lives in Oslo", category="places"))
        names = await backend.user_leftovers("ann")
        before = {n: (await client.dump(n), await client.pttl(n)) for n in names}
        slots = {await client.cluster_keyslot(n) for n in names}
        assert len(slots) > 2  # the user's namespaces really are in several slots
        assert (await backend.archive.archive("ann")).archived
        assert await backend.user_leftovers("ann") == [archived_key("cold", "ann")]
        assert await backend.archive.present("ann")
        assert await backend.user_leftovers("ann") == names
        for name in names:
            assert await client.pttl(name) == before[name][1]
            assert await client.type(name) is not None
        hits, total = await tiers.recall("ann", "trip").search("ferry")
        assert total == 5 and hits[0].doc.text.startswith("User: trip note")
        assert [f.text for f in await tiers.facts.search("ann", "Oslo")] == ["Ann lives in Oslo"]


async def test_graph_memory_on_a_cluster(cluster_url: str, tmp_path: Path) -> None:
    from brain.memory.graph import Relation

    settings = Settings.model_validate(
        {"home": str(tmp_path), "redis": {"url": cluster_url, "cluster": True}}
    )
    async with await RedisConnection.open(settings) as connection:
        graph, facts = redis_tiers(connection.client).graph, redis_tiers(connection.client).facts
        for tenant in ("alice", "bob", "carol"):
            me, city = await graph.upsert(tenant, [(tenant, "person", []), ("Oslo", "place", [])])
            relation = Relation(source=me, relation="lives_in", target=city, source_turns=("t1",))
            assert (await graph.relate(tenant, relation))[1]
            await graph.mention(tenant, [(me, "t1")])
            assert await graph.retire(tenant, relation.id)
            around = await graph.neighbourhood(tenant, [me], as_of=relation.created_at + 0.000_001)
            assert around.lines() == [f"{tenant} -lives_in-> Oslo [retired]"]
            events = [e.event for e in await facts.history(tenant) if e.subject == "relation"]
            assert events == ["ADD", "DELETE"]


async def test_a_busy_cluster_client_waits_instead_of_failing(cluster_url: str, tmp_path: Path) -> None:
    import asyncio

    from brain.storage.conversation import WriteBatch

    settings = Settings.model_validate(
        {"home": str(tmp_path), "redis": {"url": cluster_url, "cluster": True, "max_connections": 2}}
    )
    async with await RedisConnection.open(settings) as connection:
        store = RedisMemoryStore(connection.client, prefix="wait")

        async def chat(i: int) -> None:
            for t in range(5):
                await store.write(
                    Conversation(f"u{i}", "c"), WriteBatch(turns=((Message(content=f"{t}"), 1),))
                )
            await store.read_turns(Conversation(f"u{i}", "c"), 1, 5)  # a pipeline

        await asyncio.gather(*(chat(i) for i in range(40)))  # 40 chats on 2 connections per node
        for i in range(40):
            assert len(await store.read_turns(Conversation(f"u{i}", "c"), 1, 10)) == 5


class OnACluster:
    """A backend with a prefix of its own on the test cluster."""

    @pytest.fixture
    async def backend(self, cluster_url: str, tmp_path: Path) -> AsyncIterator[RedisBackend]:
        settings = Settings.model_validate(
            {"home": str(tmp_path), "redis": {"url": cluster_url, "cluster": True}}
        )
        async with await RedisConnection.open(settings) as connection:
            yield RedisBackend(connection.client, prefix=f"c{uuid.uuid4().hex[:8]}")


class TestErasureOnACluster(OnACluster, ErasureStoreConformance):
    """A script reads one slot only: each erased namespace keeps a copy of the erasure record."""


class TestQueueOnACluster(OnACluster, FactQueueConformance):
    """The stream, its dead letters and each chat's tries share one slot; a park checks the user's erasure
    record (another slot) right after its script."""


class TestFactWritesOnACluster(OnACluster, FactWriteConformance):
    """A fact, its search entry, provenance and change counter share the user's slot: one script."""


class TestApiKeysOnACluster(OnACluster, ApiKeyStoreConformance):
    """A key's lookup and its rate counter are in two slots: two calls, never one script across them."""


async def test_wait_replicas_goes_to_the_writes_own_node_on_a_cluster(
    cluster_url: str, tmp_path: Path
) -> None:
    from brain.errors import StoreError
    from brain.storage.conversation import WriteBatch

    settings = Settings.model_validate(
        {
            "home": str(tmp_path),
            "redis": {"url": cluster_url, "cluster": True, "wait_replicas": 1, "wait_timeout_ms": 100},
        }
    )
    batch = WriteBatch(turns=((Message(id="w1", content="hello"), 2),))
    async with await RedisConnection.open(settings) as connection:
        backend = RedisBackend.for_settings(connection.client, settings)
        for chat in (f"wait-{uuid.uuid4().hex}" for _ in range(6)):  # chats on every node
            with pytest.raises(StoreError, match="reached 0 of the 1 replicas"):  # these nodes have none
                await backend.conversations.write(Conversation("ann", chat), batch)
            stored = await backend.conversations.read_turns(Conversation("ann", chat), 1, 5)
            assert [t.message.id for t in stored] == ["w1"]  # on the primary: a retry with the id is safe


async def test_a_turns_fact_queue_entry_and_archive_check_stay_calls_of_their_own_on_a_cluster(
    cluster_url: str, tmp_path: Path
) -> None:
    from brain.errors import ArchivedError
    from brain.memory.facts import Fact

    settings = Settings.model_validate(
        {"home": str(tmp_path), "redis": {"url": cluster_url, "cluster": True}}
    )
    async with await RedisConnection.open(settings) as connection:
        prefix = f"wq{uuid.uuid4().hex[:8]}"
        backend = RedisBackend(connection.client, prefix=prefix)
        memory = await BrainMemory.loads(backend.conversations, "ann", "c")
        memory.add_talk(Message(content="I live in Oslo"))
        await memory.dumps(queue_facts=True)  # the queue's slot is not the chat's: not in the write
        assert not memory.facts_queued and memory.turn_count == 1
        assert (await backend.queue.counters()).backlog == 0
        tiers = redis_tiers(connection.client, prefix=prefix)
        await tiers.facts.add("ann", Fact(text="Ann lives in Oslo"))
        seen: list[int] = []

        def known(generation: int) -> dict[str, Fact]:
            seen.append(generation)
            return {}

        found = await tiers.facts.search("ann", "Oslo", known=known)  # the generation read in its slot
        assert [f.text for f in found] == ["Ann lives in Oslo"]
        assert seen == [await tiers.facts.generation("ann")] == [1]
        await connection.client.hset(archived_key(prefix, "bob"), "state", "archived")  # the marker's slot
        with pytest.raises(ArchivedError):  # is not the chat's: read apart, before the load
            await BrainMemory.loads(backend.conversations, "bob", "c", pending="Hi", refuse_archived=True)
        assert not await connection.client.exists(backend.conversations.keys(Conversation("bob", "c")).meta)
