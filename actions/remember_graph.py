"""Remember as a graph: turn a batch of turns into entities and relations. One tool call extracts both; a
second only when a new relation may contradict a current one (same source and relation, another target).
A relation the batch says ended ("Caroline left Google", flagged by the model, or spelled as an ending:
`ended_relation`) is not stored: it retires the current relation with the same source, relation and
target without a call; when it names none exactly ("left", or works_at for a stored works_for), the second
call is shown the current relations between its two entities. Entities resolve by name and alias without
a call. Every change goes through `GraphMemory`, audited with the facts; nothing is deleted. Applying the
same batch again changes nothing and calls nothing."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence, Set
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
from brain.llm.json_reply import excerpt
from brain.llm.protocol import LLM
from brain.memory.facts import fact_hash
from brain.memory.graph import (
    GraphMemory,
    Neighbourhood,
    Relation,
    ended_relation,
    name_key,
    relation_name,
)
from brain.memory.graph.model import day
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


class _Ending(BaseModel):
    """A relation the batch says ended, at `relation.invalid_at` (the date said, `dated`, else the time of
    the latest turn saying it). `exact`: `relation.relation` is the relation that ended; else only the verb
    that ended it is known ("left")."""

    model_config = ConfigDict(frozen=True)

    relation: Relation
    exact: bool
    dated: bool


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
    new, endings = _relations(extracted, ids, turns, facts or {})
    said = [*new, *(e.relation for e in endings)]
    # a document is about what it names, and about both ends of a relation learned from it (a speaker
    # who says "I moved to Porto" names herself only as the speaker)
    learned = [
        (end, doc)
        for r in said
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
    around = await graph.neighbourhood(user_id, sorted({r.source for r in said}), limit=500)
    ended = _ended(around, endings)
    candidates = _candidates(around, new, endings, {old.id for old, _ in ended})[: settings.max_checks]
    chosen: list[int] = []
    reason, calls = "", 1
    if candidates:  # asked before anything is retired: an unusable reply retires nothing
        fresh = [_line(r, names, around) for r in new] + [_ended_line(e, names, around) for e in endings]
        check = await llm.complete(
            render_check(_lines(around, candidates), fresh), tools=[RETIRE_RELATIONS], tool_choice="required"
        )
        usage, calls = usage + check.usage, 2
        chosen, reason = parse_retired(check, len(candidates))
    retired = 0
    for index in chosen:
        old = candidates[index]
        successor = next((r for r in new if r.source == old.source and r.relation == old.relation), None)
        ending = next((e for e in endings if _between(old, e.relation)), None)
        when = successor.valid_at if successor is not None else None
        if successor is None and ending is not None:
            when = ending.relation.invalid_at
        retired += await graph.retire(
            user_id,
            old.id,
            invalid_at=when,
            actor=actor,
            reason=reason or ("contradicted" if successor is not None or ending is None else "ended"),
            source=source,
            label=_lines(around, [old])[0],
        )
    for old, ending in ended:
        retired += await graph.retire(
            user_id,
            old.id,
            invalid_at=ending.relation.invalid_at,
            actor=actor,
            reason=_ended_reason(ending, turns),
            source=ending.relation.source_turns,
            label=_lines(around, [old])[0],
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
) -> tuple[list[Relation], list[_Ending]]:
    """The batch's new relations and its endings: flagged `ends`, or spelled as one (`ended_relation`).
    A relation both stated and ended in the batch is what the later of the two says ("quit Google in
    2019 ... back at Google now")."""
    out: dict[str, Relation] = {}
    endings: dict[str, _Ending] = {}
    times = {t.id: t.created_at.timestamp() for t in turns}
    for r in extracted.relations:
        start, end, verb = ids.get(name_key(r.source)), ids.get(name_key(r.target)), relation_name(r.relation)
        if start is None or end is None or not verb or start == end:
            continue
        fact = next((i for i, t in facts.items() if _names(t, r.source) and _names(t, r.target)), None)
        provenance = _provenance(turns, r.source, r.target)
        stops = ended_relation(verb)
        if stops is None and r.ends:
            stops = verb
        when = parse_when(r.valid_at)
        if stops is None:
            relation = Relation(
                source=start, relation=verb, target=end, valid_at=when, fact_id=fact, source_turns=provenance
            )
            endings.pop(relation.key, None)
            out.setdefault(relation.key, relation)
            continue
        relation = Relation(
            source=start,
            relation=stops or verb,
            target=end,
            invalid_at=when if when is not None else max(times[t] for t in provenance),
            fact_id=fact,
            source_turns=provenance,
        )
        out.pop(relation.key, None)
        endings[relation.key] = _Ending(relation=relation, exact=bool(stops), dated=when is not None)
    return list(out.values()), list(endings.values())


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


def _ended(around: Neighbourhood, endings: Sequence[_Ending]) -> list[tuple[Relation, _Ending]]:
    """The current relations an ending names exactly (same source, relation and target), with it; not one
    that began after the date the ending was said to happen."""
    return [
        (old, e)
        for e in endings
        if e.exact
        for old in around.relations
        if old.key == e.relation.key
        and not (e.dated and old.valid_at is not None and (e.relation.invalid_at or 0) < old.valid_at)
    ]


def _candidates(
    around: Neighbourhood, new: Sequence[Relation], endings: Sequence[_Ending], retiring: Set[str]
) -> list[Relation]:
    """Current relations (not already `retiring`) that the batch may end: those a new one may contradict
    (same source and relation, another target), then, for an ending that names none exactly, those
    between its two entities (either way)."""
    keys = {r.key for r in new}
    slots = {(r.source, r.relation) for r in new}
    loose = [e.relation for e in endings if not any(old.key == e.relation.key for old in around.relations)]
    found = {
        r.id: r
        for r in around.relations
        if r.id not in retiring and r.key not in keys and (r.source, r.relation) in slots
    }
    for r in around.relations:
        if r.id not in retiring and r.key not in keys and any(_between(r, e) for e in loose):
            found.setdefault(r.id, r)
    return list(found.values())


def _between(relation: Relation, other: Relation) -> bool:
    """Whether two relations join the same two entities, either way."""
    return {relation.source, relation.target} == {other.source, other.target}


def _lines(around: Neighbourhood, relations: Sequence[Relation]) -> list[str]:
    return around.model_copy(update={"relations": tuple(relations)}).lines()


def _ended_line(ending: _Ending, names: Mapping[str, str], around: Neighbourhood) -> str:
    when = f" {day(ending.relation.invalid_at)}" if ending.dated and ending.relation.invalid_at else ""
    return f"{_line(ending.relation, names, around)} [ended{when}]"


def _ended_reason(ending: _Ending, turns: Sequence[Message]) -> str:
    """The audit reason of a retirement by an ending: "ended: " and the (latest) turn that said it."""
    said = [t.content for t in turns if t.id in ending.relation.source_turns and t.content]
    return f"ended: {excerpt(said[-1], 100)}" if said else "ended"


def _line(relation: Relation, names: Mapping[str, str], around: Neighbourhood) -> str:
    def name(entity: str) -> str:
        known = around.entities.get(entity)
        return names.get(entity) or (known.name if known else entity)

    return f"{name(relation.source)} -{relation.relation}-> {name(relation.target)}"
