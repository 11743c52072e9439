"""Archival search cost: one tenant with 10,000 and 100,000 seeded synthetic passages in a local Redis.

Reports insert throughput (passages/s with a 384-dimension vector each, one client, 100 passages per round
trip, each indexed atomically by its own script call), lexical and hybrid query latency (p50/p95 over 300
queries of 1 to 4 words drawn like the passages' words, plus a random query vector for hybrid; the embedding
call is not included), the first hybrid query's (which loads the vector snapshot), and recall@10 of the vector
ranking against a brute-force scan. Prints a table, then one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from benchmarks.common.servers import local_redis
from benchmarks.common.stores import redis_index
from brain.backends.redis.client import TranslatingRedis
from brain.keys import archival_base
from brain.search.index import IndexedDoc

SIZES = [int(s) for s in sys.argv[1:]] or [10_000, 100_000]
QUERIES = 300
DIM = 384


def vocabulary(rng: random.Random, n: int = 20_000) -> list[str]:
    letters = "abcdefghijklmnoprstuvwyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(4, 9))) for _ in range(n)]


def passage(rng: random.Random, words: list[str], weights: list[float]) -> str:
    return " ".join(rng.choices(words, weights, k=rng.randint(30, 80))) + "."


async def main() -> None:
    rng = random.Random(2026)
    words = vocabulary(rng)
    weights = [1 / (rank + 10) for rank in range(len(words))]  # Zipf-like: a few words are everywhere
    results: dict[int, dict[str, float]] = {}
    with local_redis() as (url, server):
        client = TranslatingRedis.from_url(url)
        for size in SIZES:
            index = redis_index(client, archival_base("brain", f"bench-{size}"))
            texts = [passage(rng, words, weights) for _ in range(size)]
            docs = [
                IndexedDoc(id=str(i), text=t, tags=(f"t{i % 7}",), ts=1_700_000_000 + i)
                for i, t in enumerate(texts)
            ]
            vectors = np.random.default_rng(size).normal(size=(size, DIM)).astype(np.float32)
            started = time.perf_counter()
            for start in range(0, size, 100):  # bulk load, as `brain memory load` does: 100 per round trip
                await index.add_many(docs[start : start + 100], vectors[start : start + 100].tolist())
            insert_per_s = size / (time.perf_counter() - started)
            queries = [" ".join(rng.choices(words, weights, k=rng.randint(1, 4))) for _ in range(QUERIES)]
            qvectors = np.random.default_rng(size + 1).normal(size=(QUERIES, DIM)).astype(np.float32)
            t0 = time.perf_counter()
            await index.search(queries[0], vector=qvectors[0].tolist(), limit=10)
            first_ms = (time.perf_counter() - t0) * 1000
            lexical, hybrid, recall = [], [], []
            unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
            for query, qvector in zip(queries, qvectors, strict=True):
                t0 = time.perf_counter()
                await index.search(query, limit=10)
                lexical.append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                await index.search(query, vector=qvector.tolist(), limit=10)
                hybrid.append((time.perf_counter() - t0) * 1000)
            for qvector in qvectors[:50]:
                exact = {str(i) for i in np.argsort(-(unit @ qvector))[:10]}
                found = {h.doc.id for h in await index.vector_search(qvector.tolist(), limit=10)}
                recall.append(len(exact & found) / 10)
            results[size] = {
                "insert_per_s": insert_per_s,
                "p50": statistics.median(lexical),
                "p95": statistics.quantiles(lexical, n=20)[18],
                "hybrid_p50": statistics.median(hybrid),
                "hybrid_p95": statistics.quantiles(hybrid, n=20)[18],
                "first_ms": first_ms,
                "recall": statistics.mean(recall),
            }
            await index.drop()
        await client.aclose()
    print(f"server: {server}; top 10, {QUERIES} queries per size; vectors of {DIM} dimensions")
    print(
        f"{'passages':>9} | {'insert/s':>9} | {'lexical p50/p95 ms':>18} | {'hybrid p50/p95 ms':>17} | "
        f"{'first hybrid ms':>15} | {'vector recall@10':>16}"
    )
    for size, r in results.items():
        print(
            f"{size:>9} | {r['insert_per_s']:>9.0f} | {r['p50']:>8.2f} / {r['p95']:>7.2f} | "
            f"{r['hybrid_p50']:>7.2f} / {r['hybrid_p95']:>7.2f} | {r['first_ms']:>15.0f} | "
            f"{r['recall']:>16.3f}"
        )
    print(
        json.dumps(
            {
                "insert_per_s": round(min(r["insert_per_s"] for r in results.values())),
                "p50_ms": {str(s): round(r["p50"], 3) for s, r in results.items()},
                "p95_ms": {str(s): round(r["p95"], 3) for s, r in results.items()},
                "hybrid_p50_ms": {str(s): round(r["hybrid_p50"], 3) for s, r in results.items()},
                "vector_recall_at_10": round(min(r["recall"] for r in results.values()), 3),
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
