"""The cold-user archive's figures for `benchmarks/storage.py`: a tiered user of 1k turns (a chat with its
recall index, and facts) moved out of Redis and brought back, repeatedly: the share of the user's bytes
that left RAM, and the p50 of bringing the user back (`UserArchive.present`)."""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common.chat_text import exchanges
from benchmarks.common.storage_chat import key_bytes, write_chat
from benchmarks.common.storage_facts import store_facts
from brain.backends.redis import RedisBackend, RedisClient
from brain.llm.tokens import Tokenizer
from brain.memory.brain_memory import BrainMemory
from brain.memory.tiers import Tiers

__all__ = ["archive_figures"]

RUNS = 9


async def _bytes(client: RedisClient, names: list[str]) -> int:
    return sum([await key_bytes(client, name) for name in names])


async def archive_figures(client: RedisClient, tokenizer: Tokenizer) -> dict[str, Any]:
    """`archive_ram_freed_ratio`, `rehydrate_p50_ms`, and what was measured."""
    from brain.backends.redis.archive_store import DirectoryStore

    await client.flushdb()
    with tempfile.TemporaryDirectory(prefix="brain-archive-") as folder:
        backend = RedisBackend(client, prefix="storage-cold", archive_store=DirectoryStore(Path(folder)))
        tiers = Tiers(backend)
        memory = await BrainMemory.loads(backend.conversations, "cold-user", "chat", tokenizer=tokenizer)
        await write_chat(tiers, memory, exchanges("en", 500, seed=33), index=True)
        await store_facts(tiers.facts, "cold-user", "en", 40)
        names = await backend.user_leftovers("cold-user")
        used = await _bytes(client, names)
        times, file_bytes = [], 0
        for _ in range(RUNS):
            result = await backend.archive.archive("cold-user")
            assert result.archived, result
            file_bytes = result.file_bytes
            start = time.perf_counter()
            assert await backend.archive.present("cold-user")
            times.append((time.perf_counter() - start) * 1000)
        assert await backend.user_leftovers("cold-user") == names  # every key back
        await backend.archive.archive("cold-user")
        left = await _bytes(client, await backend.user_leftovers("cold-user"))
    p50 = statistics.median(times)
    print(
        f"\n[archive] a tiered user of 1,000 turns and 40 facts: {len(names)} keys, {used:,} bytes in RAM, "
        f"archive file {file_bytes:,} bytes; archived, {left:,} bytes stay (the marker)\n  bringing the "
        f"user back, {RUNS} runs: p50 {p50:.1f} ms (runs {', '.join(f'{t:.0f}' for t in times)} ms)"
    )
    return {"archive_ram_freed_ratio": (used - left) / used, "rehydrate_p50_ms": p50}
