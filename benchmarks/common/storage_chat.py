"""One chat's bytes in brain mode, in tiered mode and as a MetaGPT blob, for `benchmarks/storage.py`.

Turns are committed as the engine commits them (`roles.engine`): at a turn's start the question is saved as
the pending talk, then one `WriteBatch` (through `BrainMemory.dumps` → `RedisMemoryStore.write`) holds the
question, the answer and the turn's usage. In tiered mode each exchange is then indexed as the tiered mode's
`sync_recall` does (`recall_doc`, `add_many`, the `turns` source marker). Brain mode's bytes are every family
but the recall index's (brain mode writes the same keys, less the index)."""

from __future__ import annotations

import statistics
import time
from datetime import UTC, datetime
from typing import Any

from benchmarks.common.chat_text import Exchange, exchanges, metagpt_blob, raw_bytes
from benchmarks.common.storage_report import families_table, total
from benchmarks.common.storage_runs import assistant_costs
from benchmarks.retrieval_dev.generate import generate
from brain.backends.redis import RedisBackend, RedisClient
from brain.backends.redis.stats import storage_costs
from brain.llm.tokens import Tokenizer
from brain.llm.usage import Usage
from brain.memory.brain_memory import BrainMemory
from brain.memory.tiers import Tiers
from brain.message import Message
from brain.storage.index import IndexedDoc
from brain.storage.usage import ModelUsage
from roles.modes.tiered import recall_doc

__all__ = ["assistant_check", "chat_sizes", "key_bytes", "lexical_p50", "write_chat"]

_SPENT = (ModelUsage(model="scripted", calls=1, prompt_tokens=900, completion_tokens=80),)


async def key_bytes(client: RedisClient, key: str) -> int:
    return int(await client.execute_command("MEMORY", "USAGE", key, "SAMPLES", "0") or 0)


async def write_chat(tiers: Tiers, memory: BrainMemory, pairs: list[Exchange], *, index: bool) -> None:
    """`pairs` committed to `memory`'s chat as the engine does; with `index`, each exchange indexed after."""
    recall = tiers.recall(memory.user_id, memory.chat_id)
    for question, answer in pairs:
        memory.set_last_talk(question.content)  # what `BrainMemory.loads(pending=...)` saves
        await memory.dumps()
        memory.pop_last_talk()
        memory.add_usage(1, Usage(prompt_tokens=900, completion_tokens=80), _SPENT)
        memory.add_talk(question)
        memory.add_answer(answer)
        await memory.dumps()
        if index:  # as `sync_recall` does: each turn a reference to its seq
            seq = memory.turn_count
            await recall.add_many([_recall_doc(question, seq - 1), _recall_doc(answer, seq)])
            await recall.set_source("turns", {"upto": memory.turn_count})


def _recall_doc(message: Message, seq: int) -> IndexedDoc:
    try:
        return recall_doc(message, seq)  # type: ignore[call-arg,unused-ignore]
    except TypeError:  # a revision before recall documents referenced their turns (--baseline)
        return recall_doc(message)


async def chat_sizes(
    client: RedisClient, language: str, sizes: list[int], tokenizer: Tokenizer
) -> dict[str, Any]:
    """One chat grown to each of `sizes` turns: per size its raw bytes and its brain, tiered and MetaGPT
    blob ratios; `raw_per_turn`; with English and 10k turns, `lexical_p50_ms` over its recall index."""
    await client.flushdb()
    backend = RedisBackend(client, prefix=f"storage-{language}")
    tiers = Tiers(backend)
    pairs = exchanges(language, max(sizes) // 2)
    memory = await BrainMemory.loads(backend.conversations, "chat-user", "chat", tokenizer=tokenizer)
    out: dict[str, Any] = {"raw_per_turn": raw_bytes(pairs) / (2 * len(pairs))}
    asked = statistics.mean(len(q.content.encode()) for q, _ in pairs)
    said = statistics.mean(len(a.content.encode()) for _, a in pairs)
    print(
        f"\n[{language}] raw bytes per turn {out['raw_per_turn']:.1f} "
        f"(questions {asked:.1f}, answers {said:.1f})"
    )
    done = 0
    for size in sizes:
        t0 = time.perf_counter()
        await write_chat(tiers, memory, pairs[done : size // 2], index=True)
        done = size // 2
        costs, raw = await storage_costs(backend), raw_bytes(pairs[:done])
        text = metagpt_blob(pairs[:done]).encode()
        await client.set("metagpt-blob", text)
        blob = await key_bytes(client, "metagpt-blob")
        await client.delete("metagpt-blob")
        brain, tiered = total(costs, index=False), total(costs)
        out[str(size)] = {"brain": brain / raw, "tiered": tiered / raw, "metagpt": blob / raw}
        title = f"[{language}] one chat of {size:,} turns, tiered (brain mode: every family but recall.*)"
        families_table(title, costs, size, raw)
        print(
            f"  brain mode {brain:,} bytes ({brain / raw:.2f}×); the index {1 - brain / tiered:.0%} of "
            f"tiered; written in {time.perf_counter() - t0:.1f} s\n  MetaGPT blob: MEMORY USAGE {blob:,} "
            f"bytes ({blob / raw:.2f}×; jemalloc size classes), its JSON {len(text):,} bytes "
            f"({len(text) / raw:.2f}×)"
        )
    if language == "en" and max(sizes) >= 10_000:
        out["lexical_p50_ms"] = await lexical_p50(tiers, "chat-user", "chat")
    return out


async def lexical_p50(tiers: Tiers, user_id: str, chat_id: str, passes: int = 3) -> float:
    """The p50 of the search alone (limit 20) for the English dev-set questions over the chat's recall
    index: the lowest of `passes` passes' medians (the machine is shared: the least disturbed pass)."""
    recall = tiers.recall(user_id, chat_id)
    questions = [q.text for conv in generate("en") for q in conv.questions]
    medians = []
    for _ in range(passes):
        times = []
        for question in questions:
            t0 = time.perf_counter()
            await recall.search(question, limit=20)
            times.append((time.perf_counter() - t0) * 1000)
        medians.append(statistics.median(times))
    shown = ", ".join(f"{m:.2f}" for m in medians)
    print(f"  lexical search, {len(questions)} dev-set questions, limit 20: p50 per pass {shown} ms")
    return min(medians)


async def assistant_check(
    client: RedisClient, tokenizer: Tokenizer, n: int
) -> dict[str, tuple[float, float]]:
    """The same `n` English exchanges through the store-level path and through a real `Assistant` /
    `TieredAssistant` (facts off); per mode, (store-level, assistant) bytes ÷ raw."""
    now = datetime.now(UTC)  # the assistants stamp turns with the time they are said: so does this path
    pairs = [
        (q.model_copy(update={"created_at": now}), a.model_copy(update={"created_at": now}))
        for q, a in exchanges("en", n, seed=31)
    ]
    raw, out = raw_bytes(pairs), {}
    for mode in ("brain", "tiered"):
        await client.flushdb()
        backend = RedisBackend(client, prefix="storage-check")
        memory = await BrainMemory.loads(backend.conversations, "storage-user", "chat", tokenizer=tokenizer)
        await write_chat(Tiers(backend), memory, pairs, index=mode == "tiered")
        store_level = total(await storage_costs(backend)) / raw
        await client.flushdb()
        real = await assistant_costs(client, "storage-agent", pairs, tiered=mode == "tiered")
        out[mode] = (store_level, total(real) / raw)
        families_table(f"[check] {2 * n} turns through a real {mode}-mode assistant", real, 2 * n, raw)
        print(f"  the store-level path: {store_level:.2f}×")
    return out
