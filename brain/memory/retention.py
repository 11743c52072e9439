"""Retention: the oldest turns of a chat lose their raw text (`memory.retention`), once it lives on elsewhere.

A turn may lose its text only when it is past the policy (not among the newest `keep_turns`, older than
`keep_days`; past both when both are set), inside the chat's summary (`summary_upto`) and, with fact memory
on, already read by the fact worker (its per-chat progress). The store keeps the turn's record without
its text (`ConversationStore.drop_text`: seq numbers, ids, the window and exports unchanged), and the
turns' documents in the chat's recall index are deleted, so nothing searchable points at dropped text. How
far the recall index was cleaned is kept in it (source "retention"), so an interrupted run is finished by
the next one; a run is idempotent.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from brain.memory.tiers import Tiers
from brain.progress import Progress, report
from brain.settings import RetentionSettings
from brain.storage.conversation import Conversation, ConversationStore, Turn

__all__ = [
    "ChatRetention",
    "RetentionReport",
    "apply_retention",
    "older_prefix",
    "retain_chat",
    "retain_limit",
]

DAY_S = 86_400
_PAGE = 500
CLEANED = "retention"
"""The recall index's source recording up to which turn its documents of dropped turns were deleted."""


class ChatRetention(BaseModel):
    """One chat under the policy: its turns, how far the summary and the fact worker reach (`extracted`
    None: fact memory off), how far text was dropped before (`before`) and is now (`upto`), how many
    turns lost their text in this run (`dropped`) and recall documents deleted (`unindexed`)."""

    model_config = ConfigDict(frozen=True)

    user_id: str | bytes
    chat_id: str | bytes
    turns: int = 0
    summary_upto: int = 0
    extracted: int | None = None
    before: int = 0
    upto: int = 0
    dropped: int = 0
    unindexed: int = 0
    dry_run: bool = False


class RetentionReport(BaseModel):
    """A run over many chats: chats looked at, chats and turns whose text was (or, dry, would be) dropped,
    recall documents deleted."""

    model_config = ConfigDict(frozen=True)

    chats: int = 0
    changed: int = 0
    turns: int = 0
    unindexed: int = 0


def retain_limit(turn_count: int, summary_upto: int, extracted: int | None, keep_turns: int | None) -> int:
    """The last turn that may lose its text by count, summary and facts alone (0: none). Pure."""
    limit = summary_upto if extracted is None else min(summary_upto, extracted)
    if keep_turns is not None:
        limit = min(limit, turn_count - keep_turns)
    return max(limit, 0)


def older_prefix(turns: Sequence[Turn], cutoff: float) -> int:
    """The seq of the last turn of the unbroken run at the start of `turns` written before `cutoff` (Unix
    time); 0 when the first is not (a turn dated later stops the run: nothing newer is dropped). Pure."""
    last = 0
    for turn in turns:
        if turn.message.created_at.timestamp() >= cutoff:
            break
        last = turn.seq
    return last


async def retain_chat(
    store: ConversationStore,
    tiers: Tiers,
    conv: Conversation,
    policy: RetentionSettings,
    *,
    facts_on: bool,
    dry_run: bool = False,
    now: float | None = None,
) -> ChatRetention:
    """Apply `policy` to one chat (nothing when the policy is off or the chat is gone)."""
    state = await store.load(conv, window_turns=0, knowledge_items=0)
    found = ChatRetention(user_id=conv.user_id, chat_id=conv.chat_id, dry_run=dry_run)
    if not state.exists or not policy.enabled:
        return found
    meta = state.meta
    extracted = await tiers.facts.progress(conv.user_id, conv.chat_id) if facts_on else None
    upto = retain_limit(meta.turn_count, meta.summary_upto, extracted, policy.keep_turns)
    if policy.keep_days is not None and upto > meta.dropped_upto:
        cutoff = (time.time() if now is None else now) - policy.keep_days * DAY_S
        upto = await _older(store, conv, meta.dropped_upto, upto, cutoff)
    upto = max(upto, meta.dropped_upto)
    found = found.model_copy(
        update={
            "turns": meta.turn_count,
            "summary_upto": meta.summary_upto,
            "extracted": extracted,
            "before": meta.dropped_upto,
            "upto": upto,
        }
    )
    if dry_run:
        return found.model_copy(update={"dropped": upto - meta.dropped_upto})
    # recall first, while the turns still have their text: a recall document's postings are found by
    # analysing the text its turn holds (an interrupted run leaves text without recall, never the reverse)
    unindexed = await _unindex(store, tiers, conv, upto)
    dropped = await store.drop_text(conv, upto) if upto > meta.dropped_upto else 0
    return found.model_copy(update={"dropped": dropped, "unindexed": unindexed})


async def _older(store: ConversationStore, conv: Conversation, after: int, upto: int, cutoff: float) -> int:
    """The last turn in (after, upto] of the run from `after` + 1 written before `cutoff` (else `after`)."""
    last, start = after, after + 1
    while start <= upto:
        page = await store.read_turns(conv, start, min(_PAGE, upto - start + 1))
        if not page:
            break
        end = older_prefix(page, cutoff)
        if end < page[-1].seq:
            return max(end, last)
        last, start = end, end + 1
    return last


async def _unindex(store: ConversationStore, tiers: Tiers, conv: Conversation, dropped: int) -> int:
    """Delete the recall documents of turns whose text goes (up to `dropped`) that recall indexed; how
    many were there."""
    recall = tiers.recall(conv.user_id, conv.chat_id)
    indexed = await recall.get_source("turns")
    if indexed is None:
        return 0  # never indexed: nothing to delete, and no key is made
    cleaned = int((await recall.get_source(CLEANED) or {"upto": 0})["upto"])
    end = min(dropped, int(indexed["upto"]))  # later ones are never indexed (`sync_recall` skips them)
    deleted, start = 0, cleaned + 1
    while start <= end:
        page = await store.read_turns(conv, start, min(_PAGE, end - start + 1))
        if not page:
            break
        for turn in page:
            deleted += await recall.delete(turn.message.id)
        start = page[-1].seq + 1
    if end > cleaned:
        await recall.set_source(CLEANED, {"upto": end})
    return deleted


async def apply_retention(
    store: ConversationStore,
    tiers: Tiers,
    chats: Sequence[Conversation],
    policy: RetentionSettings,
    *,
    facts_on: bool,
    dry_run: bool = False,
    progress: Progress | None = None,
    now: float | None = None,
) -> tuple[list[ChatRetention], RetentionReport]:
    """`retain_chat` for each of `chats`, one after another: what each one did, and the sums."""
    done: list[ChatRetention] = []
    task = "checking retention" if dry_run else "applying retention"
    for n, conv in enumerate(chats, 1):
        done.append(
            await retain_chat(store, tiers, conv, policy, facts_on=facts_on, dry_run=dry_run, now=now)
        )
        report(progress, task, n, len(chats), "chats")
    changed = [c for c in done if c.dropped or c.unindexed]
    return done, RetentionReport(
        chats=len(done),
        changed=len(changed),
        turns=sum(c.dropped for c in done),
        unindexed=sum(c.unindexed for c in done),
    )
