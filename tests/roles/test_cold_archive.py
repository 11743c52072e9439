"""Cold users out of RAM: a user with brain-mode and tiered chats, facts, core blocks and archival passages
moved to the cold archive and back on first access, byte for byte; erasure reaching the archive; writes
during archiving kept."""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path
from typing import Any

import pytest
import redis
import redis.asyncio as aioredis

from brain import MemorySettings
from brain.backends.redis import RedisBackend
from brain.backends.redis.archive import UserArchive
from brain.backends.redis.archive_store import DirectoryStore
from brain.backends.redis.archive_sweep import idle_users, sweep
from brain.errors import StoreError
from brain.keys import archive_name, archived_key, conversation_keys
from brain.memory.facts import Fact
from brain.message import Message
from brain.runtime import Runtime
from brain.testing import ScriptedLLM, tool_calls
from roles.assistant import Assistant
from roles.tiered import TieredAssistant
from tests.support.prompts import search_results
from tests.support.runtime import make_runtime


def say(text: str) -> object:
    return tool_calls(("send_message", {"message": text}))


def runtime(llm: ScriptedLLM, client: aioredis.Redis, folder: Path) -> Runtime:
    settings = MemorySettings(archive_dir=folder, rewrite_followups=False)
    return make_runtime(llm, client=client, memory_settings=settings, prefix="cold")


def backend_of(rt: Runtime) -> RedisBackend:
    assert isinstance(rt.backend, RedisBackend)
    return rt.backend


async def contents(client: aioredis.Redis, name: str) -> object:
    """A key's value whatever its type, compared as data (a DUMP's field order may differ after RESTORE)."""
    kind = (await client.type(name)).decode()
    reads: dict[str, Any] = {
        "string": lambda: client.get(name),
        "hash": lambda: client.hgetall(name),
        "list": lambda: client.lrange(name, 0, -1),
        "set": lambda: client.smembers(name),
        "zset": lambda: client.zrange(name, 0, -1, withscores=True),
        "stream": lambda: client.xrange(name),
    }
    return kind, await reads[kind]()


async def snapshot(
    client: aioredis.Redis, backend: RedisBackend, user: str
) -> dict[str, tuple[object, bool]]:
    """Every key of the user but the marker: its value and whether it expires."""
    names = [n for n in await backend.user_leftovers(user) if n != archived_key("cold", user)]
    return {n: (await contents(client, n), await client.pttl(n) > 0) for n in names}


async def ram(client: aioredis.Redis, names: list[str]) -> int:
    return sum([int(await client.memory_usage(n, samples=0) or 0) for n in names])


async def fill(client: aioredis.Redis, folder: Path) -> tuple[TieredAssistant, Assistant, ScriptedLLM]:
    """Ann: a tiered chat (a core block, an archival passage, recall), a brain-mode chat, two facts."""
    llm = ScriptedLLM(
        [
            tool_calls(
                ("core_memory_append", {"label": "human", "content": "Name: Ann", "request_heartbeat": True})
            ),
            tool_calls(
                (
                    "archival_memory_insert",
                    {"content": "Ann's cat is called Miso", "tags": ["pets"], "request_heartbeat": True},
                )
            ),
            say("Nice to meet you, Ann."),
        ]
    )
    agent = TieredAssistant(runtime(llm, client, folder))
    assert await agent.chat("ann", "t", "I am Ann and my cat is Miso") == "Nice to meet you, Ann."
    plain = Assistant(runtime(ScriptedLLM(["Hello Ann.", "Oslo, noted."]), client, folder))
    assert await plain.chat("ann", "b", "Hello there") == "Hello Ann."
    assert await plain.chat("ann", "b", "I live in Oslo") == "Oslo, noted."
    tiers = agent.runtime.tiers
    assert tiers is not None
    await tiers.facts.add("ann", Fact(text="Ann lives in Oslo"))
    await tiers.facts.add("ann", Fact(text="Ann has a cat called Miso"))
    return agent, plain, llm


async def test_an_archived_user_leaves_ram_and_comes_back_whole_on_first_access(
    redis_client: aioredis.Redis, tmp_path: Path
) -> None:
    agent, plain, llm = await fill(redis_client, tmp_path)
    backend = backend_of(agent.runtime)
    before = await snapshot(redis_client, backend, "ann")
    families = {n.split("{")[1][:2] for n in before}
    assert {"r.", "f.", "id", "co"} <= families and any(n.endswith(":meta") for n in before)
    used = await ram(redis_client, list(before))

    done = await backend.archive.archive("ann")
    assert done.archived and done.keys == len(before) and done.file_bytes < done.payload_bytes
    assert await backend.user_leftovers("ann") == [archived_key("cold", "ann")]  # RAM freed: the marker only
    left = await ram(redis_client, [archived_key("cold", "ann")])
    assert (used - left) / used > 0.9
    assert (tmp_path / archive_name("cold", "ann")).is_file()
    assert (await backend.archive.archive("ann")).busy  # archived already

    memory = await plain.memory_of("ann", "b")  # the first access (a read) brings every tier back
    assert [m.content for m in memory.history][-2:] == ["I live in Oslo", "Oslo, noted."]
    assert await snapshot(redis_client, backend, "ann") == before  # byte for byte, expiries kept
    assert not await backend.archive.is_archived("ann")
    assert not (tmp_path / archive_name("cold", "ann")).exists()

    assert (await backend.archive.archive("ann")).archived  # again; now a turn that searches comes first
    llm.add(
        tool_calls(("archival_memory_search", {"query": "cat", "request_heartbeat": True})),
        say("Your cat is Miso."),
    )
    assert await agent.chat("ann", "t", "What is my cat called?") == "Your cat is Miso."
    found = search_results(llm.calls[-1].messages)[-1]
    assert found["results"][0]["text"] == "Ann's cat is called Miso"
    tiers = agent.runtime.tiers
    assert tiers is not None
    assert sorted(f.text for f in await tiers.facts.all("ann")) == [
        "Ann has a cat called Miso",
        "Ann lives in Oslo",
    ]
    human = [b for b in await tiers.core.list("user:ann") if b.label == "human"]
    assert human[0].value == "Name: Ann"


async def test_erasing_an_archived_user_deletes_the_archive_too(
    redis_client: aioredis.Redis, tmp_path: Path
) -> None:
    agent, _, _ = await fill(redis_client, tmp_path)
    backend = backend_of(agent.runtime)
    assert (await backend.archive.archive("ann")).archived
    report = await agent.forget_user("ann")
    assert report.remaining == ()
    assert not (tmp_path / archive_name("cold", "ann")).exists()
    assert await backend.user_leftovers("ann") == []
    assert not await backend.archive.present("ann")  # nothing to bring back


async def test_erasing_a_chat_of_an_archived_user_keeps_the_rest(
    redis_client: aioredis.Redis, tmp_path: Path
) -> None:
    agent, plain, _ = await fill(redis_client, tmp_path)
    backend = backend_of(agent.runtime)
    assert (await backend.archive.archive("ann")).archived
    await plain.forget("ann", "b")
    assert not await backend.archive.is_archived("ann")
    assert not await redis_client.exists(conversation_keys("cold", "ann", "b").meta)
    assert await redis_client.exists(conversation_keys("cold", "ann", "t").meta)


class WritingStore(DirectoryStore):
    """A store that, while the archive is written, lets another process write to the user."""

    def __init__(self, folder: Path, url: str, key: str) -> None:
        super().__init__(folder)
        self.url, self.key = url, key

    def put(self, name: str, data: bytes) -> None:
        with redis.Redis.from_url(self.url) as other:
            other.hset(self.key, "title", "written meanwhile")
        super().put(name, data)


async def test_a_write_while_archiving_is_kept_and_the_user_stays(
    redis_client: aioredis.Redis, redis_url: str, tmp_path: Path
) -> None:
    agent, _, _ = await fill(redis_client, tmp_path)
    backend = backend_of(agent.runtime)
    meta = conversation_keys("cold", "ann", "b").meta
    archive = UserArchive(redis_client, prefix="cold", store=WritingStore(tmp_path, redis_url, meta))
    before = await backend.user_leftovers("ann")
    done = await archive.archive("ann")
    assert done.changed and not done.archived
    assert await redis_client.hget(meta, "title") == b"written meanwhile"
    assert await backend.user_leftovers("ann") == before  # nothing deleted; no marker left
    assert not (tmp_path / archive_name("cold", "ann")).exists()  # the archive written was removed


class SlowStore(DirectoryStore):
    def put(self, name: str, data: bytes) -> None:
        time.sleep(0.3)
        super().put(name, data)


async def test_a_turn_arriving_while_archiving_waits_then_rehydrates(
    redis_client: aioredis.Redis, tmp_path: Path
) -> None:
    _, plain, _ = await fill(redis_client, tmp_path)
    backend = backend_of(plain.runtime)
    backend.archive.store = SlowStore(tmp_path)
    archiving = asyncio.create_task(backend.archive.archive("ann"))
    while not await backend.archive.is_archived("ann"):  # noqa: ASYNC110 (a state in Redis)
        await asyncio.sleep(0.01)
    plain.runtime.llm.add("Still Oslo.")  # type: ignore[attr-defined]
    assert await plain.chat("ann", "b", "Where do I live?") == "Still Oslo."
    assert (await archiving).archived  # it finished first; the turn then brought everything back
    memory = await plain.memory_of("ann", "b")
    assert [m.content for m in memory.history][-4:] == [
        "I live in Oslo",
        "Oslo, noted.",
        "Where do I live?",
        "Still Oslo.",
    ]


async def test_a_missing_archive_is_an_error_never_empty_memory(
    redis_client: aioredis.Redis, tmp_path: Path
) -> None:
    _, plain, _ = await fill(redis_client, tmp_path)
    backend = backend_of(plain.runtime)
    assert (await backend.archive.archive("ann")).archived
    (tmp_path / archive_name("cold", "ann")).unlink()
    with pytest.raises(StoreError, match="cannot read an archive"):
        await plain.memory_of("ann", "b")
    assert await backend.archive.is_archived("ann")  # still marked: a later access tries again


async def test_the_sweep_archives_idle_users_only(redis_client: aioredis.Redis, tmp_path: Path) -> None:
    _, plain, _ = await fill(redis_client, tmp_path)
    backend = backend_of(plain.runtime)
    plain.runtime.llm.add("Hi Bob.")  # type: ignore[attr-defined]
    await plain.chat("bob", "b", "I am Bob")
    await redis_client.hset(conversation_keys("cold", "bob", "b").meta, "updated_at", repr(time.time() + 9e5))
    later = time.time() + 3 * 86_400
    idle = await idle_users(redis_client, "cold", 2, now=later)
    assert [(u.user_id, u.chats) for u in idle] == [("ann", 2)]
    _, done = await sweep(backend.archive, 2, now=later)
    assert done.archived == 1 and done.idle == 1 and done.keys > 10
    assert await backend.archive.is_archived("ann") and not await backend.archive.is_archived("bob")


@pytest.mark.serial
async def test_rehydrating_a_1k_turn_user(redis_client: aioredis.Redis, tmp_path: Path) -> None:
    """The figures of issue 30: RAM freed (share of the user's bytes) and rehydration time, p50."""
    agent = TieredAssistant(runtime(ScriptedLLM([]), redis_client, tmp_path))
    words = "Oslo tea cat piano garden river train book winter coffee".split()
    messages = [
        Message(
            role="user" if i % 2 == 0 else "assistant",
            content=f"turn {i}: about {words[i % 10]} and {words[(i * 7) % 10]} on day {i // 20}",
        )
        for i in range(1_000)
    ]
    await agent.backfill("kim", "c", messages)
    backend = backend_of(agent.runtime)
    names = await backend.user_leftovers("kim")
    used = await ram(redis_client, names)
    times: list[float] = []
    result: Any = None
    for _ in range(7):
        result = await backend.archive.archive("kim")
        assert result.archived
        start = time.perf_counter()
        assert await backend.archive.present("kim")
        times.append((time.perf_counter() - start) * 1000)
    await backend.archive.archive("kim")
    freed = (used - await ram(redis_client, await backend.user_leftovers("kim"))) / used
    p50 = statistics.median(times)
    print(
        f"\narchive 1k turns: {len(names)} keys, {used:,} B in RAM, file {result.file_bytes:,} B; "
        f"archive_ram_freed_ratio={freed:.4f} rehydrate_p50_ms={p50:.1f} (runs: {[round(t) for t in times]})"
    )
    assert freed > 0.99 and p50 < 1_000


async def test_a_turns_load_finds_the_archive_itself_and_writes_nothing_until_it_is_back(
    redis_client: aioredis.Redis, tmp_path: Path
) -> None:
    from brain.errors import ArchivedError
    from brain.memory.brain_memory import BrainMemory

    _, plain, _ = await fill(redis_client, tmp_path)
    backend = backend_of(plain.runtime)
    assert (await backend.archive.archive("ann")).archived
    with pytest.raises(ArchivedError):
        await BrainMemory.loads(backend.conversations, "ann", "b", pending="Hello?", refuse_archived=True)
    assert await backend.user_leftovers("ann") == [archived_key("cold", "ann")]  # the pending text not saved
    plain.runtime.llm.add("Still Oslo.")  # type: ignore[attr-defined]
    assert await plain.chat("ann", "b", "Where do I live?") == "Still Oslo."  # brought back, loaded again
    assert not await backend.archive.is_archived("ann")
    memory = await plain.memory_of("ann", "b")
    assert [m.content for m in memory.history][-4:] == [
        "I live in Oslo",
        "Oslo, noted.",
        "Where do I live?",
        "Still Oslo.",
    ]
