"""Fact memory: what a user told us that stays true until it changes. `FactMemory` keeps the facts in a
`brain.storage.FactStore` (each change atomic with its audit event) and finds them again through the user's
fact index (BM25, plus vectors with an embedding model). Nothing is ever hard-deleted: see
`brain.storage.facts`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, MutableMapping, Sequence
from typing import TypeAlias

from brain.errors import ConflictError, InputError, StaleIndexError, StoreError
from brain.keys import facts_base
from brain.llm.protocol import Embed, embed_one
from brain.memory.fact_texts import FactTexts, fact_doc
from brain.process_caches import forget_soon
from brain.progress import Progress, report
from brain.search.index import Hit, IndexedDoc, SearchIndex
from brain.storage.facts import (
    AuditEntry,
    AuditEvent,
    Fact,
    FactStore,
    fact_hash,
    fact_key,
    held_at,
)
from brain.storage.index import Ranking

__all__ = ["AuditEntry", "AuditEvent", "Fact", "FactMemory", "Known", "fact_hash", "held_at", "trimmed_event"]

Known: TypeAlias = MutableMapping[str, Fact] | Callable[[int], MutableMapping[str, Fact]]
"""Facts read before while nothing changed (`FactCache`): a mapping, or a function giving the mapping
for the user's fact generation (`FactMemory.search` reads the generation with its ranking)."""


class FactMemory:
    """Users' facts: `store` keeps them, `index(base)` gives the search index of a namespace (the user's
    `brain.keys.facts_base`), `embed` (when set) embeds them for hybrid search."""

    def __init__(
        self,
        store: FactStore,
        index: Callable[..., SearchIndex],
        *,
        prefix: str = "brain",
        embed: Embed | None = None,
    ) -> None:
        self.store = store
        self._index = index
        self.prefix = prefix
        self.embed = embed

    def index(self, user_id: str | bytes) -> SearchIndex:
        """The user's fact index: a fact's text is the fact record's, stored once (`FactTexts`)."""
        return self._index(facts_base(self.prefix, user_id), texts=FactTexts(self.store, user_id))

    async def add(
        self,
        user_id: str | bytes,
        fact: Fact,
        *,
        actor: str = "",
        reason: str = "",
        replaces: str = "",
        vector: Sequence[float] | None = None,
    ) -> tuple[Fact, bool]:
        """Store `fact` (retiring `replaces`, when given, as superseded by it) with its search entry, in
        one write: the embedding (`vector`, or one made now) comes first, so a failing embedder writes
        nothing. Returns the stored fact and whether it is new: a current fact with the same normalized
        text is returned instead (no change)."""
        fact = fact.model_copy(update={"hash": fact_hash(fact.text), "key": fact_key(fact.key)})
        audit = AuditEntry(
            event="UPDATE" if replaces else "ADD",
            actor=actor,
            reason=reason,
            source_turns=fact.source_turns,
            new_text=fact.text,
            old_fact_id=replaces,
        )
        if vector is None:
            vector = await embed_one(self.embed, fact.text)
        index = self.index(user_id)
        entry = index.entry(self._doc(fact), vector)
        try:
            existing = await self.store.add(user_id, fact, audit, replaces, entry, index.analysis)
        except StaleIndexError:  # made by an older analysis: re-analysed once, then written
            await index.rebuild()
            existing = await self.store.add(user_id, fact, audit, replaces, entry, index.analysis)
        if existing:
            same = await self.get(user_id, existing)
            if same is None:
                raise StoreError(f"fact hash index points at a missing fact {existing!r}")
            return same, False
        return fact, True

    @staticmethod
    def _doc(fact: Fact) -> IndexedDoc:
        return fact_doc(fact)

    async def merge(
        self,
        user_id: str | bytes,
        fact_id: str,
        text: str,
        *,
        actor: str = "",
        reason: str = "",
        source: Sequence[str] = (),
    ) -> bool:
        """`text` says what current fact `fact_id` says: the wording is aliased (no call when it comes
        again) and `source` joins the fact's provenance, audited (MERGE); False when the fact was retired
        meanwhile (nothing changes)."""
        audit = AuditEntry(
            event="MERGE", actor=actor, reason=reason, source_turns=tuple(source), new_text=text
        )
        return await self.store.merge(user_id, fact_id, fact_hash(text), audit)

    async def generation(self, user_id: str | bytes) -> int:
        """Changes whenever the user's current facts change (`FactStore.generation`)."""
        return await self.store.generation(user_id)

    async def repair(self, user_id: str | bytes, progress: Progress | None = None) -> int:
        """Index every stored fact that has no search entry (facts an older version wrote in two steps and
        whose second step failed); how many. Idempotent."""
        facts = await self.store.all(user_id)
        index = self.index(user_id)
        present = {d.id for d in await index.store.docs([f.id for f in facts])}
        missing = [f for f in facts if f.id not in present]
        for done, fact in enumerate(missing, 1):
            await index.add(self._doc(fact), await embed_one(self.embed, fact.text))
            report(progress, "indexing facts", done, len(missing), "facts")
        return len(missing)

    async def retire(
        self,
        user_id: str | bytes,
        fact_id: str,
        *,
        actor: str = "",
        reason: str = "",
        source: Sequence[str] = (),
    ) -> bool:
        """Retire a current fact (it stops being true now); False when it was retired already."""
        audit = AuditEntry(event="DELETE", actor=actor, reason=reason, source_turns=tuple(source))
        return await self.store.retire(user_id, fact_id, time.time(), audit)

    async def erase(self, user_id: str | bytes, fact_ids: Sequence[str]) -> int:
        """Delete facts for good, from the store (audit events naming them included) and from the search
        index; how many existed. For erasure (e.g. of one agent's memory): nothing of them stays, in this
        process's caches of text neither (`brain.process_caches`)."""
        try:
            gone = await self.store.erase(user_id, fact_ids)
            index = self.index(user_id)
            for fact_id in fact_ids:
                await index.delete(fact_id)
        finally:
            forget_soon()
        return gone

    async def get(self, user_id: str | bytes, fact_id: str) -> Fact | None:
        facts = await self.store.get_many(user_id, [fact_id])
        return facts[0] if facts else None

    async def get_many(self, user_id: str | bytes, ids: Sequence[str]) -> list[Fact]:
        return await self.store.get_many(user_id, ids)

    async def all(self, user_id: str | bytes, *, current_only: bool = True) -> list[Fact]:
        """Every fact of the user (current ones only by default), oldest first."""
        return [f for f in await self.store.all(user_id) if f.current or not current_only]

    async def search(
        self,
        user_id: str | bytes,
        query: str,
        *,
        limit: int = 10,
        as_of: float | None = None,
        category: str | None = None,
        vector: Sequence[float] | None = None,
        linked: Sequence[str] = (),
        known: Known | None = None,
        rankings: list[Ranking] | None = None,
    ) -> list[Fact]:
        """Facts matching `query` (BM25, fused with vectors when embeddings are on; `vector` is the query's
        embedding when the caller has it): current ones, or the ones true at `as_of`; best first. None for
        a query with nothing to search for. `linked` facts (e.g. from graph memory) are raised. `known`
        holds facts read before while nothing changed (`FactCache`): those are not read again, the others
        are added to it. Given as a function of the user's fact generation, it is asked with the
        generation read before anything the search reads: in the BM25 ranking's own call where the store
        reads it there (no read of its own), else first. The BM25 rankings the hits come from are appended
        to `rankings` when given (what the store read with them: `Ranking.generation`, `Ranking.docs`)."""
        if vector is None:
            vector = await embed_one(self.embed, query)
        how, made = (category, max(limit * 2, 10), vector, linked), list[Ranking]()
        if callable(known):
            generation = None
            if vector is None and not linked:  # a BM25 ranking alone: the store may read it there
                hits = await self._related(user_id, query, how, made)
                read = [r.generation for r in made]
                generation = min(g for g in read if g is not None) if read and None not in read else None
            if generation is None:  # read first (the search made again when it was tried without it)
                generation = await self.generation(user_id)
                made.clear()
                hits = await self._related(user_id, query, how, made)
            known = known(generation)
        else:
            hits = await self._related(user_id, query, how, made)
        if rankings is not None:
            rankings += made
        facts = {} if known is None else known
        unread = [h.doc.id for h in hits if h.doc.id not in facts]
        facts.update((f.id, f) for f in await self.store.get_many(user_id, unread))
        found = [facts[h.doc.id] for h in hits if h.doc.id in facts]
        return [f for f in found if (f.true_at(as_of) if as_of is not None else f.current)][:limit]

    async def _related(
        self,
        user_id: str | bytes,
        query: str,
        how: tuple[str | None, int, Sequence[float] | None, Sequence[str]],
        rankings: list[Ranking] | None = None,
    ) -> list[Hit]:
        """`search`'s hits: `how` is (category, depth, vector, linked); `rankings` as `related`'s."""
        category, depth, vector, linked = how
        tags, ids_only = [category] if category else [], vector is None and not linked
        return await self.index(user_id).related(
            query, tags=tags, limit=depth, vector=vector, ids_only=ids_only, linked=linked, rankings=rankings
        )

    async def by_hash(self, user_id: str | bytes, hashes: Sequence[str]) -> dict[str, str]:
        """Current fact ids by content hash, for the hashes that have one: a current fact's own text, or a
        wording `alias`ed to a current fact."""
        return await self.store.by_hash(user_id, hashes)

    async def alias(self, user_id: str | bytes, text: str, fact_id: str) -> None:
        """Remember that `text` says what fact `fact_id` says: while that fact is current, the same
        wording again is an exact duplicate (no LLM call)."""
        await self.store.alias(user_id, fact_hash(text), fact_id)

    async def batch_facts(self, user_id: str | bytes, batch: str) -> list[str] | None:
        """The facts a batch with content hash `batch` gave when it was last applied (None: never)."""
        return await self.store.batch_facts(user_id, batch)

    async def set_batch_facts(self, user_id: str | bytes, batch: str, fact_ids: Sequence[str]) -> None:
        await self.store.set_batch_facts(user_id, batch, fact_ids)

    async def history(self, user_id: str | bytes, fact_id: str | None = None) -> list[AuditEvent]:
        """The audit events of one fact (or of all), oldest first."""
        events = await self.store.history(user_id)
        return events if fact_id is None else [e for e in events if fact_id in (e.fact_id, e.old_fact_id)]

    async def rollback(self, user_id: str | bytes, event_id: str, *, actor: str = "") -> list[AuditEvent]:
        """Undo one change, itself audited (ROLLBACK events, returned): an ADD retires the fact, an UPDATE
        retires the new fact and restores the old one, a DELETE restores the fact."""
        events = await self.history(user_id)
        event = next((e for e in events if e.id == event_id), None)
        if event is None:
            raise InputError(trimmed_event(event_id, events) or f"there is no fact event {event_id!r}")
        await self.undo(user_id, event, actor=actor)
        return [e for e in await self.history(user_id) if e.event == "ROLLBACK" and e.undoes == event_id]

    async def undo(self, user_id: str | bytes, event: AuditEvent, *, actor: str = "") -> None:
        """Undo `event` (one of the user's, as `history` gave it), audited; what `rollback` does once the
        event is found."""
        if event.subject == "relation":
            raise InputError(f"event {event.id} changed the graph: undo it with GraphMemory.rollback")
        if event.event == "ROLLBACK":
            raise ConflictError(
                "a rollback is not undone by another rollback; undo the original change again"
            )
        if event.event == "MERGE":
            raise ConflictError(
                f"event {event.id} only joined another wording's turns to a fact's sources: nothing to undo"
            )
        audit = AuditEntry(event="ROLLBACK", actor=actor, reason=f"rollback of {event.id}", undoes=event.id)
        if event.event in {"ADD", "UPDATE"}:
            await self.store.retire(user_id, event.fact_id, time.time(), audit)
        if event.event in {"UPDATE", "DELETE"}:
            target = event.old_fact_id if event.event == "UPDATE" else event.fact_id
            if await self.store.restore(user_id, target, audit) < 0:
                raise ConflictError(f"fact {target} cannot come back: another current fact says the same")

    async def progress(self, user_id: str | bytes, chat_id: str | bytes) -> int:
        """The last turn of the chat whose facts were applied (0: none yet)."""
        return await self.store.progress(user_id, chat_id)

    async def set_progress(self, user_id: str | bytes, chat_id: str | bytes, upto: int) -> None:
        await self.store.set_progress(user_id, chat_id, upto)


def trimmed_event(event_id: str, events: Sequence[AuditEvent]) -> str | None:
    """When `event_id`, not among the user's audit `events` (oldest first), is older than the oldest one
    kept, so trimmed from the audit trail (`memory.facts.audit_max_events`; or erased with its fact): the
    error message saying it can no longer be rolled back. None otherwise (an unknown event). Pure."""

    def order(eid: str) -> tuple[int, int] | None:
        ms, dash, seq = eid.partition("-")
        return (int(ms), int(seq)) if dash and ms.isdigit() and seq.isdigit() else None

    asked, oldest = order(event_id), order(events[0].id) if events else None
    if asked is None or oldest is None or asked >= oldest:
        return None
    return (
        f"event {event_id!r} is older than every event the audit trail keeps (memory.facts."
        "audit_max_events): it was trimmed, and a change whose event was trimmed cannot be rolled back"
    )
