"""Reconcile: apply a batch's extracted facts to a user's fact memory, the second LLM task of fact memory.

Facts are taken in rounds (`rounds`): a batch that holds several values of one key (a backfill of months,
"Oslo", then "Bergen") applies them in time order, each round reconciled with what the one before left,
as living through those turns would have. In a round, a new fact that says again what a current fact says
(the same text; the same key and value; embeddings at least `duplicate_similarity` alike when that is set)
is merged into it without a call; the others are reconciled in one call with the held facts they may
replace (`brain.memory.fact_candidates`), or all added when nothing related is held.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from actions.facts import RECONCILE_SCHEMA, Decision, NewFact, parse_decisions, parse_when, render_reconcile
from brain.errors import ConflictError
from brain.keys import log_tag
from brain.llm.protocol import LLM
from brain.memory.fact_candidates import Candidate, Probe, bounded, candidates, cosine, duplicate_of
from brain.memory.facts import Fact, FactMemory, fact_hash
from brain.settings import FactSettings
from brain.storage.facts import fact_key, fact_value

__all__ = ["Batch", "Tally", "reconcile", "rounds"]

_log = logging.getLogger("brain.facts")


@dataclass
class Tally:
    """What a batch did, counted as it goes (its calls included)."""

    calls: int = 0
    prompt_tokens: int = 0
    duplicates: int = 0
    added: int = 0
    updated: int = 0
    retired: int = 0
    unchanged: int = 0
    rejected: list[str] = field(default_factory=list)


def rounds(facts: Sequence[NewFact], when: float) -> list[list[NewFact]]:
    """`facts` in the rounds they are applied in: each key's values in time order (`valid_at`, else
    `when`), one per round (a value said again right after itself stays in that value's round, where it
    merges); facts without a key in the first round. Pure."""
    timed = sorted(enumerate(facts), key=lambda p: (_time(p[1], when), p[0]))
    out: list[list[NewFact]] = []
    last: dict[str, str] = {}
    depth: dict[str, int] = {}
    for _, fact in timed:
        key, value = fact_key(fact.key), fact_value(fact.value or fact.text)
        if not key:
            at = 0
        elif last.get(key) == value:  # said again right after itself: in its round, merged there
            at = depth[key] - 1
        else:
            last[key], at = value, depth.get(key, 0)
            depth[key] = at + 1
        while len(out) <= at:
            out.append([])
        out[at].append(fact)
    return out


def _time(fact: NewFact, when: float) -> float:
    valid = parse_when(fact.valid_at)
    return valid if valid is not None else when


@dataclass(frozen=True)
class Batch:
    """One batch's application: where, from which turns, by whom, when, how."""

    store: FactMemory
    user_id: str | bytes
    source: tuple[str, ...]
    actor: str
    when: datetime
    settings: FactSettings
    count: Callable[[str], int]
    vectors: dict[int, Sequence[float]] = field(default_factory=dict)  # id() of a new fact -> its embedding

    def fact(self, new: NewFact, text: str | None = None) -> Fact:
        valid_at = parse_when(new.valid_at)
        return Fact(
            text=text or new.text,
            category=new.category,
            key=fact_key(new.key),
            value=new.value,
            valid_at=valid_at if valid_at is not None else self.when.timestamp(),
            source_turns=self.source,
        )

    async def add(self, new: NewFact, reason: str, replaces: str = "", text: str | None = None) -> Fact:
        """Store `new` (as `text`, when the reconciliation rewrote it); the fact stored, or the current
        one that says the same."""
        fact = self.fact(new, text)
        store, user_id, actor = self.store, self.user_id, self.actor
        vector = self.vectors.get(id(new)) if fact.text == new.text else None  # else embedded anew
        try:
            stored, _ = await store.add(
                user_id, fact, actor=actor, reason=reason, replaces=replaces, vector=vector
            )
        except ConflictError:  # the fact it replaces was retired by another decision: keep the new one
            stored, _ = await store.add(user_id, fact, actor=actor, reason=reason, vector=vector)
        return stored

    async def merge(self, fact_id: str, new: NewFact) -> bool:
        return await self.store.merge(
            self.user_id, fact_id, new.text, actor=self.actor, reason="another wording", source=self.source
        )


async def reconcile(llm: LLM, job: Batch, facts: Sequence[NewFact], tally: Tally) -> None:
    """Apply one round of new facts (`rounds`) to the user's memory, counting in `tally`."""
    store, user_id, settings = job.store, job.user_id, job.settings
    unique: dict[str, NewFact] = {}
    for fact in facts:  # the first time it was said: when it became true
        unique.setdefault(fact_hash(fact.text), fact)
    known = await store.by_hash(user_id, list(unique))
    fresh = [f for h, f in unique.items() if h not in known]
    tally.duplicates += len(facts) - len(fresh)
    vectors = await store.embed([f.text for f in fresh]) if store.embed is not None and fresh else None
    job.vectors.update((id(f), vectors[i]) for i, f in enumerate(fresh) if vectors is not None)
    probes = [
        Probe(f.text, f.key, f.value, vectors[i] if vectors is not None else None)
        for i, f in enumerate(fresh)
    ]
    echoes = _echoes(probes, settings.duplicate_similarity)  # wordings of one fact within the round
    live: list[int] = []
    shown: list[list[Candidate]] = []
    outcome: dict[int, str] = {}  # a new fact's index -> the fact that holds it now
    for i in (i for i in range(len(fresh)) if i not in echoes):
        found = await candidates(store, user_id, probes[i], depth=settings.candidate_depth)
        same = duplicate_of(probes[i], found, settings.duplicate_similarity)
        if same is not None and await job.merge(same.id, fresh[i]):
            tally.duplicates += 1
            outcome[i] = same.id
            continue
        live.append(i)
        shown.append(found)
    existing = bounded(shown, settings.candidate_tokens, job.count)
    if not live:
        pass
    elif not existing:  # nothing related: every new fact is an ADD, no second call
        for i in live:
            outcome[i] = (await job.add(fresh[i], "new fact")).id
            tally.added += 1
    else:
        batch = [fresh[i] for i in live]
        reply = await llm.complete(
            render_reconcile([f.text for f in existing], [f.text for f in batch]),
            json_schema=RECONCILE_SCHEMA,
        )
        tally.calls, tally.prompt_tokens = tally.calls + 1, tally.prompt_tokens + reply.usage.prompt_tokens
        decisions, rejected = parse_decisions(reply.content or "", [f.id for f in existing], batch)
        if rejected:  # what the model said is the user's: never in a log line (one process serves many)
            _log.warning(
                "fact reconciliation for %s: rejected %d decision(s)", log_tag(user_id), len(rejected)
            )
        tally.rejected += rejected
        index = {id(f): live[k] for k, f in enumerate(batch)}
        for d in decisions:
            await _apply(job, d, tally, outcome, index)
    for echo, first in echoes.items():
        if first in outcome:
            tally.duplicates += int(await job.merge(outcome[first], fresh[echo]))


async def _apply(
    job: Batch, d: Decision, tally: Tally, outcome: dict[int, str], index: dict[int, int]
) -> None:
    """One reconciliation decision, counted; `outcome` learns which fact holds the new fact it is about."""
    new = d.new or NewFact(text=d.text, category=d.category)
    about = index.get(id(d.new), -1)
    if d.event == "ADD":
        outcome[about] = (await job.add(new, d.reason or "new fact", text=d.text)).id
        tally.added += 1
    elif d.event == "UPDATE" and d.existing is not None:
        outcome[about] = (await job.add(new, d.reason or "changed", d.existing, text=d.text)).id
        tally.updated += 1
    elif d.event == "DELETE" and d.existing is not None:
        source = job.source
        gone = await job.store.retire(
            job.user_id, d.existing, actor=job.actor, reason=d.reason or "no longer true", source=source
        )
        tally.retired += int(gone)
    else:
        tally.unchanged += 1
        # this wording again: no call next time, and its turns join the fact's sources
        if d.existing is not None and d.text and await job.merge(d.existing, d.new or new):
            outcome[about] = d.existing


def _echoes(probes: Sequence[Probe], threshold: float | None) -> dict[int, int]:
    """New facts of one batch that say what an earlier one of it says (`duplicate_of`'s rule): each
    one's index -> the earlier one's."""
    echoes: dict[int, int] = {}
    for i, probe in enumerate(probes):
        earlier = [
            Candidate(
                fact=Fact(id=str(j), text=p.text, key=fact_key(p.key), value=p.value),
                score=0.0,
                cosine=cosine(probe.vector, p.vector) if probe.vector and p.vector else None,
            )
            for j, p in enumerate(probes[:i])
            if j not in echoes
        ]
        same = duplicate_of(probe, earlier, threshold)
        if same is not None:
            echoes[i] = int(same.id)
    return echoes
