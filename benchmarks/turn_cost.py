"""Per-turn persistence cost: load + add_talk + add_answer + dumps against a local Redis.

For histories of 10 to 50,000 stored turns, measures each turn of a conversation with no summary (the
loaded window is then capped at memory.window_max_turns = 40) and of one whose summary covers all but the
last 20 turns. Prints a table, then one JSON line (p50/p99 of the unsummarized case, the worst case).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


from benchmarks.common.servers import local_redis
from brain import BrainMemory, Message, RedisMemoryStore
from brain.backends.redis.client import TranslatingRedis
from brain.storage.conversation import Conversation, WriteBatch

LENGTHS = [10, 100, 1_000, 5_000, 50_000]
TURNS = 100  # measured turns per history (each adds 2 messages)
WARMUP = 10


async def seed(store: RedisMemoryStore, conv: Conversation, n: int) -> None:
    for start in range(0, n, 500):
        batch = tuple(
            (
                Message(
                    id=f"s{i}",
                    role="user" if i % 2 == 0 else "assistant",
                    content=f"Seeded turn {i}: a sentence of ordinary length about the weather and plans.",
                ),
                20,
            )
            for i in range(start, min(start + 500, n))
        )
        await store.write(conv, WriteBatch(turns=batch))


async def measure(store: RedisMemoryStore, user: str, chat: str) -> list[float]:
    times = []
    for i in range(WARMUP + TURNS):
        started = time.perf_counter()
        memory = await BrainMemory.loads(store, user, chat)
        memory.add_talk(Message(content=f"What should I pack for the trip, question {i}?"))
        memory.add_answer(
            Message(content="A raincoat, good shoes and a warm sweater; the forecast says 12 °C.")
        )
        await memory.dumps()
        times.append((time.perf_counter() - started) * 1000)
    return times[WARMUP:]


def pct(values: list[float], p: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(p) - 1]


async def main() -> None:
    with local_redis() as (url, server):
        client = TranslatingRedis.from_url(url)
        store = RedisMemoryStore(client, prefix="bench")
        rows = []
        for n in LENGTHS:
            await seed(store, Conversation(user_id="u", chat_id=f"plain-{n}"), n)
            await seed(store, Conversation(user_id="u", chat_id=f"summ-{n}"), n)
            await store.commit_summary(
                Conversation(user_id="u", chat_id=f"summ-{n}"),
                summary="Earlier: " * 50,
                upto=max(n - 20, 0),
                expected_upto=0,
                tokens=0,
            )
            plain = await measure(store, "u", f"plain-{n}")
            summ = await measure(store, "u", f"summ-{n}")
            rows.append((n, plain, summ))
        await client.aclose()
    print(f"server: {server}; {TURNS} measured turns per history (+{WARMUP} warm-up), times in ms")
    print(f"{'history':>8} | {'p50':>6} {'p99':>6} no summary | {'p50':>6} {'p99':>6} summarized")
    for n, plain, summ in rows:
        cells = [pct(plain, 50), pct(plain, 99), pct(summ, 50), pct(summ, 99)]
        print(f"{n:>8} | {cells[0]:6.3f} {cells[1]:6.3f}{'':11}| {cells[2]:6.3f} {cells[3]:6.3f}")
    p50 = {str(n): round(pct(p, 50), 3) for n, p, _ in rows}
    ratio = p50[str(LENGTHS[-1])] / p50[str(LENGTHS[0])]
    print(f"p50(50000)/p50(10) = {ratio:.2f}")
    print(
        json.dumps(
            {
                "p50_ms": p50,
                "p99_ms": {str(n): round(pct(p, 99), 3) for n, p, _ in rows},
                "summarized_p50_ms": {str(n): round(pct(s, 50), 3) for n, _, s in rows},
                "ratio_50000_10": round(ratio, 3),
                "server": server,
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
