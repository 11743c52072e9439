"""Vector search without a scan in Python: a namespace's vectors as one normalised float32 matrix
(`Snapshot`), scored with numpy. Pure: where the vectors come from is the store's (`brain.backends`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["Snapshot"]


def _empty() -> npt.NDArray[np.float32]:
    """No vectors. numpy is imported where vectors are first kept, not with the module: a process that
    never searches by embeddings does not load it (~50 ms of a cold start)."""
    import numpy as np

    return np.zeros((0, 0), dtype=np.float32)


@dataclass(frozen=True)
class Snapshot:
    """A namespace's vectors as of (`seq` added, `deleted` removed): row i is the unit vector of `ids[i]`.
    Only vectors of the newest dimension are kept (a changed embedding model leaves older ones out)."""

    ids: tuple[str, ...] = ()
    matrix: npt.NDArray[np.float32] = field(default_factory=_empty)
    seq: int = 0
    deleted: int = 0
    rows: dict[str, int] = field(default_factory=dict)
    gen: str = ""

    @property
    def nbytes(self) -> int:
        return int(self.matrix.nbytes) + 100 * len(self.ids)

    def extended(self, pairs: Sequence[tuple[str, bytes]], seq: int) -> Snapshot:
        """This snapshot with more vectors (in the order added)."""
        import numpy as np

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
        matrix = np.vstack(blocks) if blocks else _empty()
        return Snapshot(tuple(ids), matrix, seq, self.deleted, rows, self.gen)

    def nearest(
        self, vector: Sequence[float], limit: int, allowed: set[str] | None = None
    ) -> list[tuple[str, float]]:
        """The `limit` ids with the highest cosine similarity to `vector` (among `allowed` when given)."""
        import numpy as np

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
