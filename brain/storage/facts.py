"""Fact memory storage: each user's facts with their audit trail (`FactStore`), and the records.

Nothing is ever hard-deleted: a fact that changes or stops being true is retired (`expired_at`,
`invalid_at`, `superseded_by`) and stays readable for history and "as of" questions. Every change is one
atomic write that also appends its audit event, so a record and its audit never disagree; a new fact is
written with its search entry (postings and vector) in that same step, so no stored fact is unsearchable.
Graph relations' events go to the same audit trail (`subject` "relation").
"""

from __future__ import annotations

import hashlib
import re
import time
import unicodedata
import uuid
from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from brain.storage.index import IndexEntry

__all__ = [
    "AuditEntry",
    "AuditEvent",
    "Event",
    "Fact",
    "FactStore",
    "fact_hash",
    "fact_key",
    "fact_value",
    "held_at",
    "key_tag",
]

Event = Literal["ADD", "UPDATE", "DELETE", "ROLLBACK", "MERGE"]
"""MERGE: another wording of a current fact was met; its sources joined the fact's provenance."""

_KEY_JUNK = re.compile(r"[^\w.\-]+")


def fact_hash(text: str) -> str:
    """Hash of a fact's normalized text (NFKC, case-folded, spaces collapsed, end punctuation dropped)."""
    norm = " ".join(unicodedata.normalize("NFKC", text).casefold().split()).rstrip(".!?。！？ ")
    return hashlib.sha256(norm.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def fact_key(key: str) -> str:
    """A fact's subject and attribute as the extraction named them (`user.city`), normalized: NFKC,
    case-folded, runs of anything but word characters, '.' and '-' made one '_', at most 60 characters;
    "" for none. Pure."""
    norm = _KEY_JUNK.sub("_", unicodedata.normalize("NFKC", key).casefold()).strip("_.-")
    return norm[:60]


def fact_value(value: str) -> str:
    """A fact's value normalized for comparison (NFKC, case-folded, spaces collapsed, end punctuation and
    a leading article dropped). Pure."""
    norm = " ".join(unicodedata.normalize("NFKC", value).casefold().split()).strip(
        ".!?。！？,，;；:：'\"“”「」 "
    )
    for article in ("the ", "a ", "an "):
        if norm.startswith(article):
            return norm[len(article) :]
    return norm


def key_tag(key: str) -> str:
    """The search index tag of facts with subject/attribute `key` (normalized), "" for none: tags have no
    ':' or spaces, and '=' keeps them apart from categories."""
    return f"={key}" if key else ""


def held_at(
    when: float, valid_at: float | None, invalid_at: float | None, created_at: float, expired_at: float | None
) -> bool:
    """Whether something bi-temporal held at `when`: from when it became true (or, unknown, when we learned
    it) until it stopped (or, unknown, until we retired it). Pure."""
    start = valid_at if valid_at is not None else created_at
    end = invalid_at if invalid_at is not None else expired_at
    return start <= when and (end is None or when < end)


class Fact(BaseModel):
    """One fact. `valid_at`/`invalid_at`: when it is true in the world (as far as the conversation says);
    `created_at`/`expired_at`: when we learned it and when we retired it (seconds since the epoch)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(default_factory=lambda: uuid.uuid4().hex, min_length=1, max_length=64)
    text: str = Field(min_length=1, max_length=4_000)
    category: str = "misc"
    agent_id: str | None = None
    run_id: str | None = None
    valid_at: float | None = None
    invalid_at: float | None = None
    created_at: float = Field(default_factory=time.time)
    expired_at: float | None = None
    superseded_by: str | None = None
    source_turns: tuple[str, ...] = ()
    hash: str = ""
    key: str = ""  # subject.attribute (`fact_key`), e.g. "user.city"; "" when the extraction named none
    value: str = ""  # what the fact says of `key`, e.g. "Oslo"

    @property
    def current(self) -> bool:
        """Not retired."""
        return self.expired_at is None

    def true_at(self, when: float) -> bool:
        """Whether the fact held at `when`, as far as we know now."""
        return held_at(when, self.valid_at, self.invalid_at, self.created_at, self.expired_at)


class AuditEntry(BaseModel):
    """What a change records beside itself; the store adds the subject's id (and the old text it knows)."""

    model_config = ConfigDict(frozen=True)

    event: Event
    actor: str = ""
    reason: str = ""
    source_turns: tuple[str, ...] = ()
    new_text: str = ""
    old_text: str = ""
    old_fact_id: str = ""
    undoes: str = ""


class AuditEvent(BaseModel):
    """One change to fact (or graph) memory, as the audit trail keeps it. `id` orders events: "<ms>-<n>"
    (milliseconds since the epoch, then a counter), as Redis stream ids are; `at` is its time."""

    model_config = ConfigDict(frozen=True)

    id: str
    event: Event
    fact_id: str
    old_fact_id: str = ""
    old_text: str = ""
    new_text: str = ""
    actor: str = ""
    reason: str = ""
    source_turns: tuple[str, ...] = ()
    at: float = 0.0
    undoes: str = ""  # for ROLLBACK: the event it undid
    subject: Literal["fact", "relation"] = "fact"  # relation events: `fact_id` is a graph relation's id


@runtime_checkable
class FactStore(Protocol):
    """Users' facts and their audit trail. Every method raises `StoreError` when the store cannot answer;
    a user's facts are reachable only through that user's id."""

    async def add(
        self,
        user_id: str | bytes,
        fact: Fact,
        audit: AuditEntry,
        replaces: str = "",
        entry: IndexEntry | None = None,
        analysis: str = "",
    ) -> str | None:
        """Atomically (`fact.hash` is `fact_hash(fact.text)`): when a current fact has `fact.hash` already,
        its id (nothing written). Otherwise store `fact` as current, retiring `replaces` (when given) as
        superseded by it (expired at `fact.created_at`, invalid from `fact.valid_at`, or from
        `fact.created_at` when it has none), append `audit` naming `fact.id` (with the replaced fact's text
        as `old_text`) and, with `entry`, index it in the user's fact index (`brain.keys.facts_base`) as
        `IndexStore.add` would, all in one step; None. `NotFoundError` when `replaces` does not exist,
        `ConflictError` when it was retired meanwhile, `StaleIndexError` when the fact index was made by
        another analysis than `analysis` (nothing written in any of these)."""
        ...

    async def merge(self, user_id: str | bytes, fact_id: str, text_hash: str, audit: AuditEntry) -> bool:
        """Atomically: another wording (hash `text_hash`) of current fact `fact_id` was met. Alias it, add
        `audit.source_turns` to the fact's provenance (its `source_turns` from now on, without repeats)
        and append `audit` (a MERGE) naming the fact; True. False when the fact is retired (nothing
        written). `NotFoundError` for no such fact."""
        ...

    async def generation(self, user_id: str | bytes) -> int:
        """A number that changes whenever the user's current facts change (an add, retire, restore, merge
        or erasure), for caches of what a turn shows."""
        ...

    async def retire(self, user_id: str | bytes, fact_id: str, now: float, audit: AuditEntry) -> bool:
        """Atomically retire a current fact at `now` (expired and invalid then), auditing it with its text
        as `old_text`; False when it was retired already (nothing written). `NotFoundError` for no such
        fact."""
        ...

    async def restore(self, user_id: str | bytes, fact_id: str, audit: AuditEntry) -> int:
        """Atomically make a retired fact current again, auditing it with its text as `new_text`: 1, 0 when
        it is current (nothing written), -1 when another current fact has its hash (nothing written).
        `NotFoundError` for no such fact."""
        ...

    async def erase(self, user_id: str | bytes, fact_ids: Sequence[str]) -> int:
        """Delete facts for good (an erasure, not a change): their records, retired state, hash entries,
        provenance, the aliases naming them and every audit event naming them (`fact_id` or
        `old_fact_id`). How many existed. (Their search entries are the index's to delete.)"""
        ...

    async def get_many(self, user_id: str | bytes, ids: Sequence[str]) -> list[Fact]:
        """The facts of `ids` that exist (retired ones with their state), in the order of `ids`."""
        ...

    async def all(self, user_id: str | bytes) -> list[Fact]:
        """Every fact of the user, retired ones included, oldest first (by `created_at`, then id)."""
        ...

    async def by_hash(self, user_id: str | bytes, hashes: Sequence[str]) -> dict[str, str]:
        """Current fact ids by content hash, for the hashes that have one: a current fact's own hash, or a
        hash `alias`ed to a fact that is not retired."""
        ...

    async def alias(self, user_id: str | bytes, text_hash: str, fact_id: str) -> None:
        """Remember that the text of hash `text_hash` says what fact `fact_id` says."""
        ...

    async def batch_facts(self, user_id: str | bytes, batch: str) -> list[str] | None:
        """The fact ids recorded for a batch (by content hash) when it was applied, sorted and without
        repeats; None: never."""
        ...

    async def set_batch_facts(self, user_id: str | bytes, batch: str, fact_ids: Sequence[str]) -> None: ...

    async def history(self, user_id: str | bytes) -> list[AuditEvent]:
        """Every audit event of the user (facts' and graph relations'), oldest first."""
        ...

    async def progress(self, user_id: str | bytes, chat_id: str | bytes) -> int:
        """The last turn of the chat whose facts were applied (0: none yet)."""
        ...

    async def set_progress(self, user_id: str | bytes, chat_id: str | bytes, upto: int) -> None: ...
