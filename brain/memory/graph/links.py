"""What the graph adds to a search: the documents linked to the entities a query is about. Entities come
from the names in the query and from the best hits of a first search (`seeds`); their neighbours are
followed one relation out, and from those one more (bounded by `neighbours` each time), so a question
two relations away from what it names ("where does the sister of the person who adopted a dog live")
reaches the turn that answers it. The linked documents are the turns and facts relations were learned
from, and those naming the entities (not for hubs: an entity named by more than `hub_mentions`
documents, such as the user, would link everything)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence

from brain.memory.graph.store import GraphMemory
from brain.search import segmenter
from brain.search.analysis import HAN
from brain.settings import GraphSettings

__all__ = ["graph_links", "query_names"]

_WORD = re.compile(r"\w+")
_MOST = 300


def query_names(query: str) -> list[str]:
    """Every run of one to three words of `query` (and the words jieba finds in Chinese), as names an
    entity might have. Pure."""
    words = _WORD.findall(query)
    names = [" ".join(words[i : i + n]) for n in (1, 2, 3) for i in range(len(words) - n + 1)]
    for run in HAN.findall(query):
        names += [w for w in segmenter.search_words(run) if len(w) > 1]
    return list(dict.fromkeys(names))[:_MOST]


async def graph_links(
    graph: GraphMemory, user_id: str | bytes, query: str, seed_docs: Sequence[str], settings: GraphSettings
) -> list[str]:
    """Ids of the turns and facts linked to what `query` is about (see the module), best-founded first:
    relations' sources, then mentions. Empty when the graph knows none of it."""
    named, seeded = await asyncio.gather(  # independent reads, at once
        graph.resolve(user_id, query_names(query)), graph.named_in(user_id, list(seed_docs)[: settings.seeds])
    )
    centres = list(dict.fromkeys([*named.values(), *(e for ids in seeded.values() for e in ids)]))[:20]
    if not centres or settings.neighbours == 0:
        return []
    first = await graph.neighbourhood(user_id, centres, limit=settings.neighbours)
    near = [e for r in first.relations for e in (r.source, r.target) if e not in centres]
    second = await graph.neighbourhood(user_id, list(dict.fromkeys(near)), limit=settings.neighbours)
    linked: list[str] = []
    for relation in (*first.relations, *second.relations):
        linked += [*relation.source_turns, *([relation.fact_id] if relation.fact_id else [])]
    entities = {**first.entities, **second.entities}
    small = [
        e
        for e in dict.fromkeys([*centres, *near])
        if (known := entities.get(e)) is not None and 0 < known.mentions <= settings.hub_mentions
    ]
    for docs in (await graph.mentions(user_id, small)).values():
        linked += docs
    return list(dict.fromkeys(linked))
