"""`DocumentIndex`: one index namespace's documents as search sees them, over an `IndexStore`
(`brain.storage.index`): analysed before they are stored, and re-analysed (the store rebuilds) when the
namespace was built by another analysis. Searching is `brain.search.index.SearchIndex`'s.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeVar

from brain.errors import InputError
from brain.progress import Progress
from brain.search.analyses import analysed
from brain.search.analysis import ANALYSIS
from brain.search.dates import dated_text
from brain.search.filters import tag_list
from brain.storage.index import STALE, IndexedDoc, IndexEntry, IndexStore

__all__ = ["DocumentIndex", "TextSource"]

T = TypeVar("T")


def _counts(doc: IndexedDoc, analysis: str) -> dict[str, int]:
    return analysed(doc.text, doc.ts, analysis, role=doc.tags[0] if doc.tags else "")


class TextSource(Protocol):
    """Where an index's documents keep their text when it is stored elsewhere already (a conversation's
    turns, a user's facts): the index stores `reference(doc)` (without the text) and reads documents back
    through `documents`, so the text is stored once."""

    def reference(self, doc: IndexedDoc) -> IndexedDoc:
        """What the index stores of `doc`: what the source cannot give back (its id, a reference), the
        rest left out (an empty text marks a reference). Pure."""
        ...

    async def documents(self, stored: Sequence[IndexedDoc]) -> list[IndexedDoc | None]:
        """The stored documents whole again, in order (a stored document with a text is whole already);
        None for one the source no longer holds (it is then not found)."""
        ...


class DocumentIndex:
    """One namespace's documents (`store.base`, from `brain.keys`). A dated index (recall and archival
    memory) indexes each document's day in words (`brain.search.dates`) as a field of its own, weighed
    apart (`brain.search.fields`), and puts it before the text in what callers embed (`indexed_text`).
    An index of `turns` (recall memory: `brain.memory.recall.recall_doc`) is dated, and each document's
    text starts with its speaker ("Maya: …") and its first tag is the speaker's role: both are fields too.
    With `texts`, documents are stored as references and read back through it."""

    def __init__(
        self, store: IndexStore, *, dated: bool = False, turns: bool = False, texts: TextSource | None = None
    ) -> None:
        if turns and not dated:
            raise InputError("an index of turns is dated: pass dated=True with turns=True")
        self.store = store
        self.base = store.base
        self.dated, self.turns = dated, turns
        self.texts = texts

    @property
    def analysis(self) -> str:
        """The analysis this index's postings are made with (`ANALYSIS`; `w` after it when dated, `wt`
        for turns: `brain.search.analyses`)."""
        return ANALYSIS + ("wt" if self.turns else "w" if self.dated else "")

    def indexed_text(self, doc: IndexedDoc) -> str:
        """What is indexed (and what to embed) for `doc`: its text, headed by its day when dated."""
        return dated_text(doc.text, doc.ts) if self.dated else doc.text

    async def rebuild(self, progress: Progress | None = None) -> int:
        """Re-analyse every document if the postings were made by another analysis (e.g. an index written
        by an older version). Idempotent; other processes wait for it. Returns how many were re-analysed.
        `progress` is told the counts; without one (a rebuild on first use), they are logged at INFO."""
        if self.texts is None:
            return await self.store.rebuild(self.analysis, _counts, progress)
        full = {d.id: d for d in await self.all_docs()}  # the stored references read back with their text

        def counts(doc: IndexedDoc, analysis: str) -> dict[str, int]:
            return _counts(full.get(doc.id, doc), analysis)

        return await self.store.rebuild(self.analysis, counts, progress)

    async def _current(self, run: Callable[[], Awaitable[T]], stale: Callable[[T], bool]) -> T:
        """`run()`, after a rebuild when its answer says the namespace was built by another analysis."""
        result = await run()
        if stale(result):
            await self.rebuild()
            result = await run()
        return result

    def entry(self, doc: IndexedDoc, vector: Sequence[float] | None = None) -> IndexEntry:
        """`doc` as this index stores it: its postings under `analysis`, checked tags, its vector."""
        tags = tag_list(doc.tags)
        if any(len(t) > 64 or ":" in t or t.split() != [t] for t in tags):
            raise InputError("tags are at most 64 characters, without ':' or spaces")
        doc = doc.model_copy(update={"tags": tuple(tags)})
        return IndexEntry(
            doc=doc,
            stored=None if self.texts is None else self.texts.reference(doc),
            counts=_counts(doc, self.analysis),
            vector=tuple(vector) if vector is not None else None,
        )

    async def add(self, doc: IndexedDoc, vector: Sequence[float] | None = None) -> bool:
        """Index `doc` (and its embedding); False (nothing changed) when its id is already there."""
        return await self.add_many([doc], [vector] if vector is not None else None) == 1

    async def add_many(
        self, docs: Sequence[IndexedDoc], vectors: Sequence[Sequence[float]] | None = None
    ) -> int:
        """Index many documents in one round trip (each atomically); how many were new."""
        if not docs:
            return 0
        entries = [self.entry(d, vectors[i] if vectors is not None else None) for i, d in enumerate(docs)]
        # after a rebuild, ids make indexing again idempotent
        results = await self._current(lambda: self.store.add(entries, self.analysis), lambda r: STALE in r)
        return sum(1 for r in results if r == 1)

    async def delete(self, doc_id: str) -> bool:
        """Remove a document; False when there is none. One whose text its source lost goes without its
        postings (search skips postings of removed documents; a rebuild drops them)."""
        stored = await self.store.docs([doc_id])
        if not stored:
            return False
        doc = (await self._read(stored))[0] or stored[0]

        async def run() -> int:
            return await self.store.delete(doc_id, list(_counts(doc, self.analysis)), doc.tags, self.analysis)

        return await self._current(run, lambda r: r == STALE) == 1

    async def get(self, doc_id: str) -> IndexedDoc | None:
        docs = await self._docs([doc_id])
        return docs[0] if docs else None

    async def count(self) -> int:
        return await self.store.count()

    async def _docs(self, ids: Sequence[str]) -> list[IndexedDoc]:
        return [d for d in await self._read(await self.store.docs(ids)) if d is not None]

    async def _read(self, stored: list[IndexedDoc]) -> list[IndexedDoc | None]:
        return list(stored) if self.texts is None or not stored else await self.texts.documents(stored)

    async def get_source(self, source: str) -> dict[str, Any] | None:
        """What was recorded for a loaded source (e.g. a document's hash and passage ids)."""
        return await self.store.get_source(source)

    async def set_source(self, source: str, info: dict[str, Any]) -> None:
        await self.store.set_source(source, info)

    async def all_docs(self) -> list[IndexedDoc]:
        """Every document of the namespace, by id."""
        return [d for d in await self._read(await self.store.all_docs()) if d is not None]

    async def drop(self) -> int:
        """Delete the whole namespace; how many documents it held."""
        return await self.store.drop(_counts)
