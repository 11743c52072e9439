"""Vector search without a scan in Python: each namespace's vectors as one normalised float32 matrix in the
process, kept in step with Redis, scored with numpy.

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
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from brain.search.filters import text
from brain.store.connection import RedisClient

__all__ = ["Snapshot", "VectorCache"]

_EMPTY = np.zeros((0, 0), dtype=np.float32)


@dataclass(frozen=True)
class Snapshot:
    """A namespace's vectors as of (`seq` added, `deleted` removed): row i is the unit vector of `ids[i]`.
    Only vectors of the newest dimension are kept (a changed embedding model leaves older ones out)."""

    ids: tuple[str, ...] = ()
    matrix: npt.NDArray[np.float32] = field(default_factory=lambda: _EMPTY)
    seq: int = 0
    deleted: int = 0
    rows: dict[str, int] = field(default_factory=dict)
    gen: str = ""

    @property
    def nbytes(self) -> int:
        return int(self.matrix.nbytes) + 100 * len(self.ids)

    def extended(self, pairs: Sequence[tuple[str, bytes]], seq: int) -> Snapshot:
        """This snapshot with more vectors (in the order added)."""
        ids, rows = list(self.ids), dict(self.rows)
        vectors = [np.frombuffer(packed, dtype=np.float32) for _, packed in pairs]
        dim = len(vectors[-1]) if vectors else (self.matrix.shape[1] if self.matrix.size else 0)
        if self.matrix.size and self.matrix.shape[1] != dim:
            ids, rows, blocks = [], {}, []
        else:
            blocks = [self.matrix] if self.matrix.size else []
        fresh = []
        for (doc_id, _), vector in zip(pairs, vectors, strict=True):
            if len(vector) == dim and dim and doc_id not in rows:
                rows[doc_id] = len(ids)
                ids.append(doc_id)
                fresh.append(vector)
        if fresh:
            block = np.vstack(fresh)
            norms = np.linalg.norm(block, axis=1, keepdims=True)
            blocks.append((block / np.where(norms == 0, 1, norms)).astype(np.float32))
        matrix = np.vstack(blocks) if blocks else _EMPTY
        return Snapshot(tuple(ids), matrix, seq, self.deleted, rows, self.gen)

    def nearest(
        self, vector: Sequence[float], limit: int, allowed: set[str] | None = None
    ) -> list[tuple[str, float]]:
        """The `limit` ids with the highest cosine similarity to `vector` (among `allowed` when given)."""
        query = np.asarray(vector, dtype=np.float32)
        if not self.ids or query.shape != (self.matrix.shape[1],) or limit <= 0:
            return []
        query = query / (float(np.linalg.norm(query)) or 1.0)
        if allowed is None:
            candidates = None
            scores = self.matrix @ query
        else:
            candidates = np.fromiter(sorted(self.rows[i] for i in allowed if i in self.rows), dtype=np.int64)
            scores = self.matrix[candidates] @ query
        top = np.argpartition(-scores, limit - 1)[:limit] if len(scores) > limit else np.arange(len(scores))
        top = top[np.argsort(-scores[top], kind="stable")]
        rows = top if candidates is None else candidates[top]
        return [(self.ids[int(r)], float(s)) for r, s in zip(rows, scores[top], strict=True)]


class VectorCache:
    """The snapshots of the namespaces this process searched, least recently used dropped first beyond
    `max_bytes`. Safe to share between tasks and event loops: snapshots are immutable values."""

    def __init__(self, max_bytes: int = 512 * 1024 * 1024) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, Snapshot] = OrderedDict()
        self._lock = threading.Lock()

    async def snapshot(self, client: RedisClient, base: str) -> Snapshot:
        """The namespace's vectors as Redis has them now."""
        stats = f"{base}:stats"
        seq_raw, deleted_raw, gen_raw = await client.hmget(stats, ["vseq", "vdel", "vgen"])
        seq, deleted, gen = int(seq_raw or 0), int(deleted_raw or 0), text(gen_raw or b"")
        with self._lock:
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
