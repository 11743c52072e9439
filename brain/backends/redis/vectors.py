"""The process's vector snapshots of Redis index namespaces, kept in step with Redis.

Redis stays the truth: `vec` (id -> packed float32), `vseq` (id by the order vectors were added), two
counters in `stats` (`vseq`: vectors added, `vdel`: vectors removed) and its `vgen`, the time its first
vector was added (a namespace dropped and written again starts its counters anew: its `vgen` tells it apart).
Every query reads them (one round trip); new vectors are fetched by sequence (two more), and a removal or a
new generation reloads the namespace. So every process sees every other's writes and erasures, and a query
costs a matrix-vector product, not a read of every vector.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from brain.backends.redis.client import RedisClient
from brain.process_caches import remember
from brain.search.filters import text
from brain.search.vectors import Snapshot

__all__ = ["VectorCache"]


class VectorCache:
    """The snapshots of the namespaces this process searched, least recently used dropped first beyond
    `max_bytes`, and those nobody searched between two emptyings of the process's caches (`cache_clear`,
    `brain.process_caches`: a namespace erased by another process leaves this one's memory in time). Safe
    to share between tasks and event loops: snapshots are immutable values."""

    def __init__(self, max_bytes: int = 512 * 1024 * 1024) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, Snapshot] = OrderedDict()
        self._searched: set[str] = set()  # since the last `cache_clear`
        self._lock = threading.Lock()
        remember(self)

    def cache_clear(self) -> None:
        """Drop the snapshots of namespaces not searched since the last call (one searched meanwhile is
        checked against Redis on every search: an erasure there reloads it empty)."""
        with self._lock:
            for base in [b for b in self._entries if b not in self._searched]:
                del self._entries[base]
            self._searched = set()

    async def snapshot(self, client: RedisClient, base: str) -> Snapshot:
        """The namespace's vectors as Redis has them now."""
        stats = f"{base}:stats"
        seq_raw, deleted_raw, gen_raw = await client.hmget(stats, ["vseq", "vdel", "vgen"])
        seq, deleted, gen = int(seq_raw or 0), int(deleted_raw or 0), text(gen_raw or b"")
        with self._lock:  # `cache_clear` may run on another thread's loop
            self._searched.add(base)
            known = self._entries.get(base)
        if known is not None and (known.seq, known.deleted, known.gen) == (seq, deleted, gen):
            with self._lock:
                if base in self._entries:
                    self._entries.move_to_end(base)
            return known
        if known is None or known.gen != gen or known.deleted != deleted or seq < known.seq:
            snap = await self._load(client, base)
        else:
            snap = await self._more(client, base, known)
        with self._lock:
            current = self._entries.get(base)
            if current is None or (snap.deleted, snap.seq) >= (current.deleted, current.seq):
                self._entries[base] = snap
                self._entries.move_to_end(base)
            total = sum(s.nbytes for s in self._entries.values())
            while total > self.max_bytes and len(self._entries) > 1:
                total -= self._entries.popitem(last=False)[1].nbytes
        return snap

    def discard(self, bases: Iterable[str]) -> None:
        """Drop the snapshots of `bases` (namespaces this process dropped or erased: their vectors leave
        its memory at once; another process's go when it next searches them, or as least recently used)."""
        with self._lock:
            for base in bases:
                self._entries.pop(base, None)

    async def _load(self, client: RedisClient, base: str) -> Snapshot:
        for _ in range(5):  # the counters only grow: equal before and after means nothing changed between
            pipe = client.pipeline(transaction=False)
            pipe.hmget(f"{base}:stats", ["vseq", "vdel", "vgen"])
            pipe.hgetall(f"{base}:vec")
            pipe.zrange(f"{base}:vseq", 0, -1)
            pipe.hmget(f"{base}:stats", ["vseq", "vdel", "vgen"])
            before, packed, ordered, (seq, deleted, gen) = await pipe.execute()
            if list(before) == [seq, deleted, gen]:
                break
        vectors = {text(k): v for k, v in packed.items()}
        order = [text(i) for i in ordered]
        order += sorted(set(vectors) - set(order))  # vectors written before `vseq` existed
        pairs = [(i, vectors[i]) for i in order if i in vectors]
        return Snapshot(deleted=int(deleted or 0), gen=text(gen or b"")).extended(pairs, int(seq or 0))

    async def _more(self, client: RedisClient, base: str, known: Snapshot) -> Snapshot:
        vseq = f"{base}:vseq"
        added: list[Any] = await client.zrangebyscore(vseq, f"({known.seq}", "+inf", withscores=True)
        if not added:
            return known
        ids = [text(i) for i, _ in added]
        packed: list[Any] = await client.hmget(f"{base}:vec", ids)
        pairs = [(i, p) for i, p in zip(ids, packed, strict=True) if p is not None]
        return known.extended(pairs, int(max(score for _, score in added)))
