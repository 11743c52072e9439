"""Rebuilding an index's postings when they were made by another analysis or an older layout (an index
written by an older version): the documents are read, every posting-derived key is deleted (an older
layout's sorted set per term too, found again with the old analysis) and the documents are posted anew.

One process rebuilds (a lease in Redis); the others wait for it. While it runs the namespace records
`~<version>`: the scripts refuse to add, delete or search it for anyone else, so nothing is read from or
written into half-built postings. Its progress goes to the caller's `Progress`, or without one to the
`brain.progress` log at INFO.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import TYPE_CHECKING

from brain.backends.redis.index_scripts import LAYOUT
from brain.errors import StoreError
from brain.progress import Progress, ProgressLog, report
from brain.storage.index import Counts, IndexEntry

if TYPE_CHECKING:
    from brain.backends.redis.index import RedisIndexStore

__all__ = ["rebuild"]

LEASE_MS = 600_000
CHUNK = 500
"""Documents re-posted per pipeline (and between progress reports)."""
WAIT_SECONDS = 600.0
_RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
_DERIVED = ("docs", "num", "post", "lens", "ts", "tags", "len", "time")
"""What the postings are made of, with the tags (`len`, `time`: an older layout's lengths and times); the
documents are held in memory meanwhile."""


async def rebuild(
    store: RedisIndexStore, version: str, counts: Counts, progress: Progress | None = None
) -> int:
    """Re-post every document of `store` under `version` (an analysis with its layout) unless it records it
    already; how many were re-posted. `counts(doc, analysis)` gives a document's term counts under an
    analysis. `progress` is told the documents re-posted (without one, they are logged)."""
    client, base = store.client, store.base
    lease, token = f"{base}:rebuilding", uuid.uuid4().hex
    deadline = time.monotonic() + WAIT_SECONDS
    while not await client.set(lease, token, nx=True, px=LEASE_MS):
        if await store.stored() == version:
            return 0
        if time.monotonic() > deadline:
            raise StoreError(f"{base} is being rebuilt by another process for over {WAIT_SECONDS:.0f} s")
        await asyncio.sleep(0.05)
    try:
        old = await store.stored()
        if old == version:
            return 0
        docs = await store.all_docs()
        analysis = version.removesuffix(LAYOUT)
        progress = progress or ProgressLog()
        task = f"re-analysing {base} ({old.removesuffix(LAYOUT)} -> {analysis})"
        report(progress, task, 0, len(docs), "documents")
        old_terms: set[str] = set()
        if not old.endswith(LAYOUT):  # an older layout: one sorted set per term
            previous = old.lstrip("~")
            old_terms = set().union(*(counts(doc, previous) for doc in docs)) if docs else set()
        fresh = [IndexEntry(doc=doc, counts=counts(doc, analysis)) for doc in docs]  # before any change
        building = "~" + version
        await client.hset(f"{base}:stats", mapping={"v": building, "n": 0, "total": 0, "seq": 0})
        tags = {t for doc in docs for t in doc.tags}  # an older layout's sets
        keys = [f"{base}:post:{term}" for term in sorted(old_terms)] + [f"{base}:{p}" for p in _DERIVED]
        keys += [f"{base}:tag:{tag}" for tag in sorted(tags)]
        for start in range(0, len(keys), 500):
            await client.delete(*keys[start : start + 500])
        for start in range(0, len(fresh), CHUNK):
            await store.repost(fresh[start : start + CHUNK], building)
            if start + CHUNK < len(docs):
                report(progress, task, start + CHUNK, len(docs), "documents")
        await client.hset(f"{base}:stats", "v", version)
        report(progress, task, len(docs), len(docs), "documents")
        return len(docs)
    finally:
        await client.eval(_RELEASE, 1, lease, token)
