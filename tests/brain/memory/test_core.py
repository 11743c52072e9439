"""Core memory blocks on both servers: limits on every write path, shared blocks under concurrency."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis

from actions.memory_section import core_block_items
from brain import InputError
from brain.backends.redis.client import TranslatingRedis
from brain.backends.redis.core_blocks import RedisCoreBlockStore
from brain.memory.core import Block, BlockLimitError, ensure_blocks


async def test_edits_and_limits(redis_client: aioredis.Redis) -> None:
    core = RedisCoreBlockStore(redis_client)
    await core.create(
        "agent-1", Block(label="human", value="Name: Ann", limit=40, description="about the user")
    )
    assert (await core.append("agent-1", "human", "Likes tea")).value == "Name: Ann\nLikes tea"
    assert (await core.replace("agent-1", "human", "tea", "green tea")).value == "Name: Ann\nLikes green tea"
    with pytest.raises(
        BlockLimitError, match=r"at most 40 characters; this edit would make it 5\d .*\(15 characters"
    ):
        await core.append("agent-1", "human", "Lives in Oslo, works as a nurse")
    with pytest.raises(BlockLimitError):
        await core.replace("agent-1", "human", "Ann", "Ann " * 20)
    with pytest.raises(BlockLimitError):
        await core.set("agent-1", "human", "x" * 41)
    with pytest.raises(BlockLimitError):
        await core.create("agent-1", Block(label="big", value="x" * 11, limit=10))
    with pytest.raises(InputError, match="not found in block 'human'"):
        await core.replace("agent-1", "human", "coffee", "tea")
    with pytest.raises(InputError, match="no core memory block 'nope'"):
        await core.append("agent-1", "nope", "x")
    with pytest.raises(InputError, match="exists already"):
        await core.create("agent-1", Block(label="human"))
    [block] = await core.list("agent-1")
    assert block.value == "Name: Ann\nLikes green tea"  # every refused edit left it unchanged
    assert len("é" * 40) == 40
    await core.set("agent-1", "human", "é" * 40)  # limits count characters, not bytes


async def test_read_only_and_rendering_is_stable(redis_client: aioredis.Redis) -> None:
    core = RedisCoreBlockStore(redis_client)
    blocks = await ensure_blocks(
        core,
        "a",
        [
            Block(label="persona", value="I am Lily.", read_only=True),
            Block(label="zeta", value="z"),
            Block(label="human", value="Ann"),
        ],
    )
    with pytest.raises(InputError, match="read-only"):
        await core.append("a", "persona", "x")
    kinds = [item.kind for item in core_block_items(blocks)]
    assert kinds == ["core block persona", "core block human", "core block zeta"]
    assert [item.kind for item in core_block_items(list(reversed(blocks)))] == kinds
    assert await ensure_blocks(core, "a", [Block(label="human", value="other")]) == blocks  # existing kept


async def test_shared_block_under_concurrent_edits(redis_url: str) -> None:
    clients = [TranslatingRedis.from_url(redis_url) for _ in range(10)]
    await RedisCoreBlockStore(clients[0]).create("team", Block(label="notes", limit=100))

    async def edit(i: int) -> bool:
        try:
            await RedisCoreBlockStore(clients[i % 10]).append("team", "notes", f"note-{i:03d}")
            return True
        except BlockLimitError:
            return False

    results = await asyncio.gather(*(edit(i) for i in range(30)))
    [notes] = await RedisCoreBlockStore(clients[0]).list("team")
    lines = notes.value.split("\n")
    assert len(notes.value) <= 100 and len(lines) == sum(results) == 11  # 8 chars + newline each
    assert len(set(lines)) == len(lines)
    for client in clients:
        await client.aclose()


async def test_first_edits_copy_the_default_once_and_leave_it_unchanged(redis_client: aioredis.Redis) -> None:
    from brain.memory.core import Place, edit_block, tenant_blocks

    core = RedisCoreBlockStore(redis_client)
    await core.create("seed", Block(label="team", value="Due Friday"))
    places = {
        "team": Place(scope=b"mine", seed=b"seed", template=Block(label="team", value="unused")),
        "human": Place(scope=b"mine", template=Block(label="human", value="?")),
    }
    assert [b.value for b in await tenant_blocks(core, places)] == ["Due Friday", "?"]  # nothing stored
    assert await core.list(b"mine") == []
    await asyncio.gather(
        *(edit_block(core, places, "team", lambda s, i=i: core.append(s, "team", f"n{i}")) for i in range(5))
    )
    [team] = [b for b in await tenant_blocks(core, places) if b.label == "team"]
    assert sorted(team.value.split("\n")) == ["Due Friday", *(f"n{i}" for i in range(5))]
    assert [b.value for b in await core.list("seed")] == ["Due Friday"]
    with pytest.raises(InputError, match="no core memory block 'persona'; blocks: team, human"):
        await edit_block(core, places, "persona", lambda s: core.append(s, "persona", "x"))
