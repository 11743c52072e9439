"""Remember as a graph: turn a batch of turns into entities and relations. One tool call extracts both; a
second only when a new relation may contradict a current one (same source and relation, another target).
Entities resolve by name and alias without a call. Every change goes through `GraphMemory`, audited with
the facts; nothing is deleted. Applying the same batch again changes nothing and calls nothing."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import datetime

from pydantic import BaseModel, ConfigDict

from actions.facts import parse_when
from actions.graph import (
    RECORD_GRAPH,
    RETIRE_RELATIONS,
    Extracted,
    parse_extracted,
    parse_retired,
    render_check,
    render_extract,
)
from brain.llm.protocol import LLM
from brain.memory.facts import fact_hash
from brain.memory.graph import GraphMemory, Neighbourhood, Relation, name_key, relation_name
from brain.message import Message, speaker
from brain.settings import GraphSettings

__all__ = ["GraphReport", "remember_graph"]

_log = logging.getLogger("brain.graph")


class GraphReport(BaseModel):
    """What one batch did to graph memory."""

    model_config = ConfigDict(frozen=True)

    repeat: bool = False
    entities: int = 0
    relations: int = 0  # new ones
    retired: int = 0
    cut: int = 0  # entities and relations over the per-batch caps, dropped
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


async def remember_graph(
    llm: LLM,
    graph: GraphMemory,
    user_id: str | bytes,
    turns: Sequence[Message],
    settings: GraphSettings,
    *,
    facts: Mapping[str, str] | None = None,
    actor: str = "graph-extractor",
    today: datetime | None = None,
) -> GraphReport:
    """Extract the graph of `turns` into `user_id`'s graph memory. `facts` (id -> text, the facts learned
    from the same turns) are linked to the entities they name. `LLMError` when a reply is unusable: no
    relation is added or retired and the batch is not marked applied, so it can be tried again (entities and
    mentions written before a failed contradiction check are written again the same way: idempotent)."""
    if not turns:
        return GraphReport()
    transcript = "\n".join(f"{speaker(m)}: {m.content}" for m in turns)
    batch = fact_hash("graph\n" + transcript)
    if await graph.applied(user_id, batch):
        return GraphReport(repeat=True)
    reply = await llm.complete(
        render_extract(transcript, today), tools=[RECORD_GRAPH], tool_choice="required"
    )
    usage = reply.usage
    extracted, cut = parse_extracted(reply, settings.max_entities, settings.max_relations)
    if cut:
        _log.warning(
            "graph extraction for %r: %d entities or relations over the batch caps were dropped", user_id, cut
        )
    ids = await _entities(graph, user_id, extracted)
    source = tuple(m.id for m in turns)
    new = _relations(extracted, ids, turns, facts or {})
    # a document is about what it names, and about both ends of a relation learned from it (a speaker
    # who says "I moved to Porto" names herself only as the speaker)
    learned = [
        (end, doc)
        for r in new
        for doc in (*r.source_turns, *filter(None, [r.fact_id]))
        for end in (r.source, r.target)
    ]
    await graph.mention(user_id, [*_mentions(extracted, ids, turns, facts or {}), *learned])
    spelled = [e.name for e in extracted.entities] + [
        n for r in extracted.relations for n in (r.source, r.target)
    ]
    names: dict[str, str] = {}
    for name in spelled:
        if name_key(name) in ids:
            names.setdefault(ids[name_key(name)], name)
    around = await graph.neighbourhood(user_id, sorted({r.source for r in new}), limit=500)
    retired = 0
    candidates = _candidates(around, new)[: settings.max_checks]
    calls = 1
    if candidates:
        shown = around.model_copy(update={"relations": tuple(candidates)}).lines()
        fresh = [_line(r, names, around) for r in new]
        check = await llm.complete(
            render_check(shown, fresh), tools=[RETIRE_RELATIONS], tool_choice="required"
        )
        usage, calls = usage + check.usage, 2
        chosen, reason = parse_retired(check, len(candidates))
        for index in chosen:
            old = candidates[index]
            successor = next((r for r in new if r.source == old.source and r.relation == old.relation), None)
            retired += await graph.retire(
                user_id,
                old.id,
                invalid_at=successor.valid_at if successor is not None else None,
                actor=actor,
                reason=reason or "contradicted",
                source=source,
                label=shown[index],
            )
    added = 0
    for relation in new:
        _, is_new = await graph.relate(
            user_id, relation, actor=actor, reason="extracted", label=_line(relation, names, around)
        )
        added += is_new
    await graph.set_applied(user_id, batch)
    return GraphReport(
        entities=len(set(ids.values())),
        relations=added,
        retired=retired,
        cut=cut,
        calls=calls,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
    )


async def _entities(graph: GraphMemory, user_id: str | bytes, extracted: Extracted) -> dict[str, str]:
    """Entity ids by name key (names, aliases and relation ends that were not listed as entities)."""
    listed = {name_key(e.name): e for e in extracted.entities if name_key(e.name)}
    ends = [
        n
        for r in extracted.relations
        for n in (r.source, r.target)
        if name_key(n) and name_key(n) not in listed
    ]
    entities = [(e.name, e.type.lower(), list(e.aliases)) for e in listed.values()]
    entities += [(n, "thing", []) for n in dict.fromkeys(ends)]
    stored = await graph.upsert(user_id, entities)
    ids: dict[str, str] = {}
    for (name, _, aliases), entity in zip(entities, stored, strict=True):
        for key in (name_key(name), *map(name_key, aliases)):
            if key:
                ids.setdefault(key, entity)
    return ids


def _mentions(
    extracted: Extracted, ids: Mapping[str, str], turns: Sequence[Message], facts: Mapping[str, str]
) -> list[tuple[str, str]]:
    """(entity, document) for each turn's text and fact text naming an entity or one of its aliases."""
    spelled: dict[str, set[str]] = {}
    for entity in extracted.entities:
        entity_id = ids.get(name_key(entity.name))
        if entity_id is not None:
            spelled.setdefault(entity_id, set()).update(
                n.casefold() for n in (entity.name, *entity.aliases) if n.strip()
            )
    for relation in extracted.relations:
        for end in (relation.source, relation.target):
            if name_key(end) in ids:
                spelled.setdefault(ids[name_key(end)], set()).add(end.casefold())
    documents = [(m.id, (m.content or "").casefold()) for m in turns] + [
        (i, t.casefold()) for i, t in facts.items()
    ]
    return [
        (e, doc)
        for e, spellings in spelled.items()
        for doc, text in documents
        if any(s in text for s in spellings)
    ]


def _relations(
    extracted: Extracted, ids: Mapping[str, str], turns: Sequence[Message], facts: Mapping[str, str]
) -> list[Relation]:
    out: dict[str, Relation] = {}
    for r in extracted.relations:
        start, end, verb = ids.get(name_key(r.source)), ids.get(name_key(r.target)), relation_name(r.relation)
        if start is None or end is None or not verb or start == end:
            continue
        fact = next((i for i, t in facts.items() if _names(t, r.source) and _names(t, r.target)), None)
        relation = Relation(
            source=start,
            relation=verb,
            target=end,
            valid_at=parse_when(r.valid_at),
            fact_id=fact,
            source_turns=_provenance(turns, r.source, r.target),
        )
        out.setdefault(relation.key, relation)
    return list(out.values())


def _names(text: str, name: str) -> bool:
    return name.casefold() in text.casefold()


def _provenance(turns: Sequence[Message], source: str, target: str) -> tuple[str, ...]:
    """The turns a relation was learned from: those naming both ends (a speaker names herself), else
    those naming either, else the whole batch."""

    def named(turn: Message, name: str) -> bool:
        return _names(turn.content or "", name) or name_key(turn.sent_from) == name_key(name)

    both = [t.id for t in turns if named(t, source) and named(t, target)]
    either = [t.id for t in turns if named(t, source) or named(t, target)]
    return tuple(both or either or [t.id for t in turns])


def _candidates(around: Neighbourhood, new: Sequence[Relation]) -> list[Relation]:
    """Current relations that a new one may contradict: same source and relation, another target."""
    keys = {r.key for r in new}
    slots = {(r.source, r.relation) for r in new}
    return [r for r in around.relations if (r.source, r.relation) in slots and r.key not in keys]


def _line(relation: Relation, names: Mapping[str, str], around: Neighbourhood) -> str:
    def name(entity: str) -> str:
        known = around.entities.get(entity)
        return names.get(entity) or (known.name if known else entity)

    return f"{name(relation.source)} -{relation.relation}-> {name(relation.target)}"
