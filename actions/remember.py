"""Remember: turn a batch of turns into fact memory. At most two LLM calls on the memory model: one to
extract, one to reconcile the new facts with the related ones we hold (`brain.memory.fact_candidates`: by
key, words and meaning, bounded in tokens; none when nothing related exists). A duplicate never reaches it:
the same text, or another wording of a current fact (same key and value; or, when set, embeddings at least
`memory.facts.duplicate_similarity` alike; or the reconciliation's NONE), is merged into that fact, its
turns joining the provenance.
Every change goes through `FactMemory`, audited; nothing is deleted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict

from actions.facts import extract_schema, parse_facts, parse_summary, render_extract, render_transcript
from actions.reconcile import Batch, Tally, reconcile, rounds
from brain.llm.protocol import LLM
from brain.memory.facts import FactMemory, fact_hash
from brain.message import Message
from brain.settings import FactSettings

__all__ = ["RememberReport", "remember"]


class RememberReport(BaseModel):
    """What one batch did to fact memory."""

    model_config = ConfigDict(frozen=True)

    repeat: bool = False  # the same turns gave facts that are all still current: no call at all
    extracted: int = 0
    duplicates: int = (
        0  # facts we hold said again (the same text, or another wording: merged), not reconciled
    )
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
    today: datetime | None = None,
    fold: Sequence[str] = (),
    max_words: int = 200,
    settings: FactSettings | None = None,
    count: Callable[[str], int] | None = None,
) -> RememberReport:
    """Extract facts from `turns` and reconcile them with `user_id`'s. With `fold` (the summary so far and
    the turns leaving the window), the extraction call also writes the new rolling summary
    (`report.summary`). Facts are true from the time of the turn that says them (the latest turn's when
    the model names none); `today` defaults to that time. `settings` bounds the candidates shown for
    reconciliation (`count` measures their tokens) and sets the similarity of a duplicate. `LLMError`
    (nothing applied, the batch can be tried again) when a reply is unusable; applying the same batch
    again changes nothing."""
    if not turns and not fold:
        return RememberReport()
    source = tuple(m.id for m in turns)
    transcript = render_transcript(turns) or "(none)"
    batch = fact_hash(transcript)
    if not fold and (repeated := await _repeat(store, user_id, batch)) is not None:
        return RememberReport(repeat=True, hashes=repeated)
    when = max((m.created_at for m in turns), default=None) or datetime.now(UTC)
    job = Batch(store, user_id, source, actor, when, settings or FactSettings(), count or _estimate)
    report = await _remember(llm, job, transcript, today or when, fold, max_words)
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


def _estimate(text: str) -> int:
    """Tokens of `text` without a tokenizer: about one per 3 characters (English), one per character
    (Chinese)."""
    wide = sum(1 for c in text if ord(c) > 0x2E80)
    return wide + (len(text) - wide) // 3 + 1


async def _remember(
    llm: LLM, job: Batch, transcript: str, today: datetime, fold: Sequence[str], max_words: int
) -> RememberReport:
    reply = await llm.complete(
        render_extract(transcript, today, fold=fold, max_words=max_words),
        json_schema=extract_schema(bool(fold)),
    )
    extracted = parse_facts(reply.content or "")
    summary = parse_summary(reply.content or "") if fold else None
    tally = Tally(calls=1, prompt_tokens=reply.usage.prompt_tokens)
    for facts in rounds(extracted, job.when.timestamp()):
        await reconcile(llm, job, facts, tally)
    return RememberReport(
        hashes=tuple(dict.fromkeys(fact_hash(f.text) for f in extracted)),
        extracted=len(extracted),
        duplicates=tally.duplicates,
        added=tally.added,
        updated=tally.updated,
        retired=tally.retired,
        unchanged=tally.unchanged,
        rejected=tuple(tally.rejected),
        calls=tally.calls,
        prompt_tokens=tally.prompt_tokens,
        summary=summary,
    )
