"""Rebuilding an index's postings when they were made by another analysis (an index written by an older
version): the old terms are found again with the old analysis, removed, and the documents posted anew.

One process rebuilds (a lease in Redis); the others wait for it. Until the index records the new analysis,
the scripts refuse to add, delete or search it, so nothing is read from or written into half-built postings.
Its progress goes to the caller's `Progress`, or without one to the `brain.progress` log at INFO.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence

from brain.backends.redis.client import RedisClient
from brain.errors import StoreError
from brain.progress import Progress, ProgressLog, report
from brain.storage.index import IndexedDoc

__all__ = ["rebuild"]

LEASE_MS = 600_000
CHUNK = 500
"""Documents re-posted per pipeline (and between progress reports)."""
WAIT_SECONDS = 600.0
_RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"


async def rebuild(
    client: RedisClient,
    base: str,
    analysis: str,
    stored: Callable[[], Awaitable[str]],
    all_docs: Callable[[], Awaitable[Sequence[IndexedDoc]]],
    counts: Callable[[IndexedDoc, str], dict[str, int]],
    progress: Progress | None = None,
) -> int:
    """Re-post every document of `base` under `analysis` unless `stored()` already says so; how many were
    re-posted. `counts(doc, analysis)` gives a document's term counts under an analysis. `progress` is told
    the documents re-posted (without one, they are logged)."""
    lease, token = f"{base}:rebuilding", uuid.uuid4().hex
    deadline = time.monotonic() + WAIT_SECONDS
    while not await client.set(lease, token, nx=True, px=LEASE_MS):
        if await stored() == analysis:
            return 0
        if time.monotonic() > deadline:
            raise StoreError(f"{base} is being rebuilt by another process for over {WAIT_SECONDS:.0f} s")
        await asyncio.sleep(0.05)
    try:
        old = await stored()
        if old == analysis:
            return 0
        docs = await all_docs()
        progress = progress or ProgressLog()
        task = f"re-analysing {base} ({old} -> {analysis})"
        report(progress, task, 0, len(docs), "documents")
        old_terms = set().union(*(counts(doc, old) for doc in docs)) if docs else set()
        keys = [f"{base}:post:{term}" for term in sorted(old_terms)] + [f"{base}:len"]
        for start in range(0, len(keys), 500):
            await client.delete(*keys[start : start + 500])
        total = 0
        for start in range(0, len(docs), CHUNK):
            pipe = client.pipeline(transaction=False)
            for doc in docs[start : start + CHUNK]:
                doc_counts = counts(doc, analysis)
                total += sum(doc_counts.values())
                pipe.hset(f"{base}:len", doc.id, sum(doc_counts.values()))
                for term, tf in doc_counts.items():
                    pipe.zadd(f"{base}:post:{term}", {doc.id: tf})
            await pipe.execute()
            if start + CHUNK < len(docs):
                report(progress, task, start + CHUNK, len(docs), "documents")
        await client.hset(f"{base}:stats", mapping={"v": analysis, "total": total, "n": len(docs)})
        report(progress, task, len(docs), len(docs), "documents")
        return len(docs)
    finally:
        await client.eval(_RELEASE, 1, lease, token)
