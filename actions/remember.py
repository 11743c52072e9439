"""Remember: turn a batch of turns into fact memory. At most two LLM calls on the memory model: one to
extract, one to reconcile the new facts with the related ones we hold (none when nothing related exists, and
an exact duplicate never reaches it). Every change goes through `FactMemory`, audited; nothing is deleted.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime

from pydantic import BaseModel, ConfigDict

from actions.facts import (
    RECONCILE_SCHEMA,
    NewFact,
    extract_schema,
    parse_decisions,
    parse_facts,
    parse_summary,
    parse_when,
    render_extract,
    render_reconcile,
)
from brain.errors import ConflictError
from brain.keys import log_tag
from brain.llm.protocol import LLM
from brain.memory.facts import Fact, FactMemory, fact_hash
from brain.message import Message, speaker

__all__ = ["RememberReport", "remember"]

_log = logging.getLogger("brain.facts")


class RememberReport(BaseModel):
    """What one batch did to fact memory."""

    model_config = ConfigDict(frozen=True)

    repeat: bool = False  # the same turns gave facts that are all still current: no call at all
    extracted: int = 0
    duplicates: int = 0  # exact repeats of facts we hold: no reconciliation for them
    added: int = 0
    updated: int = 0
    retired: int = 0
    unchanged: int = 0
    rejected: tuple[str, ...] = ()  # decisions not applied (an invented id, ...)
    summary: str | None = None  # the new rolling summary, when asked to fold turns into it
    hashes: tuple[str, ...] = ()  # content hashes of the facts extracted
    calls: int = 0
    prompt_tokens: int = 0


async def remember(
    llm: LLM,
    store: FactMemory,
    user_id: str | bytes,
    turns: Sequence[Message],
    *,
    actor: str = "fact-extractor",
    related: int = 5,
    today: datetime | None = None,
    fold: Sequence[str] = (),
    max_words: int = 200,
) -> RememberReport:
    """Extract facts from `turns` and reconcile them with `user_id`'s. With `fold` (the summary so far and
    the turns leaving the window), the extraction call also writes the new summary (`report.summary`).
    `LLMError` (nothing applied, the batch can be tried again) when a reply is unusable; applying the same
    batch again changes nothing."""
    if not turns and not fold:
        return RememberReport()
    source = tuple(m.id for m in turns)
    transcript = "\n".join(f"{speaker(m)}: {m.content}" for m in turns) or "(none)"
    batch = fact_hash(transcript)
    if not fold and (repeated := await _repeat(store, user_id, batch)) is not None:
        return RememberReport(repeat=True, hashes=repeated)
    report = await _remember(llm, store, user_id, transcript, source, actor, related, today, fold, max_words)
    if not report.rejected:
        facts = await store.by_hash(user_id, list(report.hashes))
        await store.set_batch_facts(user_id, batch, list(facts.values()))
    return report


async def _repeat(store: FactMemory, user_id: str | bytes, batch: str) -> tuple[str, ...] | None:
    """The content hashes of the facts these exact turns gave, when they were applied before and every
    one of those facts is still current; None otherwise."""
    ids = await store.batch_facts(user_id, batch)
    if ids is None:
        return None
    current = [f for f in await store.get_many(user_id, ids) if f.current]
    return tuple(f.hash for f in current) if len(current) == len(ids) else None


async def _remember(
    llm: LLM,
    store: FactMemory,
    user_id: str | bytes,
    transcript: str,
    source: tuple[str, ...],
    actor: str,
    related: int,
    today: datetime | None,
    fold: Sequence[str],
    max_words: int,
) -> RememberReport:
    reply = await llm.complete(
        render_extract(transcript, today, fold=fold, max_words=max_words),
        json_schema=extract_schema(bool(fold)),
    )
    calls, tokens = 1, reply.usage.prompt_tokens
    extracted = parse_facts(reply.content or "")
    summary = parse_summary(reply.content or "") if fold else None
    unique = {fact_hash(f.text): f for f in extracted}
    known = await store.by_hash(user_id, list(unique))
    fresh = [f for h, f in unique.items() if h not in known]
    counts = {"added": 0, "updated": 0, "retired": 0, "unchanged": len(extracted) - len(fresh)}
    held: dict[str, Fact] = {}
    for fact in fresh:
        for found in await store.search(user_id, fact.text, limit=related):
            held.setdefault(found.id, found)
    rejected: list[str] = []
    if not fresh:
        pass
    elif not held:  # nothing related: every new fact is an ADD, no second call
        for fact in fresh:
            counts["added"] += await _add(store, user_id, fact, source, actor, "new fact", "")
    else:
        existing = list(held.values())
        reply = await llm.complete(
            render_reconcile([f.text for f in existing], [f.text for f in fresh]),
            json_schema=RECONCILE_SCHEMA,
        )
        calls, tokens = calls + 1, tokens + reply.usage.prompt_tokens
        decisions, rejected = parse_decisions(reply.content or "", [f.id for f in existing], fresh)
        if rejected:  # what the model said is the user's: never in a log line (one process serves many)
            _log.warning(
                "fact reconciliation for %s: rejected %d decision(s)", log_tag(user_id), len(rejected)
            )
        for d in decisions:
            new = NewFact(text=d.text, category=d.category)
            if d.event == "ADD":
                counts["added"] += await _add(store, user_id, new, source, actor, d.reason or "new fact", "")
            elif d.event == "UPDATE" and d.existing is not None:
                counts["updated"] += await _add(
                    store, user_id, new, source, actor, d.reason or "changed", d.existing
                )
            elif d.event == "DELETE" and d.existing is not None:
                gone = await store.retire(
                    user_id, d.existing, actor=actor, reason=d.reason or "no longer true", source=source
                )
                counts["retired"] += int(gone)
            else:
                counts["unchanged"] += 1
                if d.existing is not None and d.text:
                    await store.alias(user_id, d.text, d.existing)  # this wording again: no call
    return RememberReport(
        hashes=tuple(unique),
        extracted=len(extracted),
        duplicates=len(extracted) - len(fresh),
        rejected=tuple(rejected),
        calls=calls,
        prompt_tokens=tokens,
        summary=summary,
        **counts,
    )


async def _add(
    store: FactMemory,
    user_id: str | bytes,
    new: NewFact,
    source: tuple[str, ...],
    actor: str,
    reason: str,
    replaces: str,
) -> int:
    fact = Fact(text=new.text, category=new.category, valid_at=parse_when(new.valid_at), source_turns=source)
    try:
        _, added = await store.add(user_id, fact, actor=actor, reason=reason, replaces=replaces)
    except ConflictError:  # the fact it replaces was retired by another decision: keep the new one
        _, added = await store.add(user_id, fact, actor=actor, reason=reason)
    return int(added)
