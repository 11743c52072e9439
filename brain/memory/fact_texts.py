"""A user's fact index stores each fact as a reference (its id): the document is made again from the fact
record (`FactStore`) when a search returns it, so a fact's text is stored once."""

from __future__ import annotations

from collections.abc import Sequence

from brain.storage.facts import Fact, FactStore, key_tag
from brain.storage.index import IndexedDoc

__all__ = ["FactTexts", "fact_doc"]


def fact_doc(fact: Fact) -> IndexedDoc:
    """A fact as its user's fact index indexes it: its text, tagged with its category and key. Pure."""
    tags = (fact.category, key_tag(fact.key)) if fact.key else (fact.category,)
    return IndexedDoc(id=fact.id, text=fact.text, tags=tags, ts=fact.created_at)


class FactTexts:
    """A `TextSource` (`brain.search.storage`) over one user's facts: a document is stored without its text
    and read back with its fact's (an erased fact's document is not found)."""

    def __init__(self, store: FactStore, user_id: str | bytes) -> None:
        self.store, self.user_id = store, user_id

    def reference(self, doc: IndexedDoc) -> IndexedDoc:
        return IndexedDoc(id=doc.id, text="", ts=0.0)

    async def documents(self, stored: Sequence[IndexedDoc]) -> list[IndexedDoc | None]:
        wanted = [d.id for d in stored if not d.text]
        facts = {f.id: f for f in await self.store.get_many(self.user_id, wanted)} if wanted else {}
        out: list[IndexedDoc | None] = []
        for doc in stored:
            if doc.text:
                out.append(doc)
            else:
                fact = facts.get(doc.id)
                out.append(None if fact is None else fact_doc(fact))
        return out
