"""Graph memory storage: each user's entities and bi-temporal relations (`GraphStore`), their records and
the pure rules that name things: how an entity name is matched (`name_key`) and what id an entity gets
(`entity_id`). Relations are never deleted: an outdated one is retired, with an event in the user's audit
trail (the facts' one, `brain.storage.facts`), and stays readable."""

from __future__ import annotations

import hashlib
import re
import time
import unicodedata
import uuid
from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from brain.storage.facts import AuditEntry, held_at

__all__ = ["Entity", "EntityWrite", "GraphStore", "Relation", "entity_id", "name_key"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")
_ARTICLES = ("the ", "a ", "an ")


def name_key(name: str) -> str:
    """The form under which a name or alias is matched: NFKC, case-folded, punctuation and an English
    article dropped, spaces collapsed; "Caroline", "caroline" and " the  Caroline!" meet. Pure."""
    norm = unicodedata.normalize("NFKC", name).casefold()
    norm = "".join(c if c.isalnum() or c in "'-" else " " for c in norm)
    norm = " ".join(re.sub(r"['’]s\b", "", norm).split()).strip("'-")
    for article in _ARTICLES:
        if norm.startswith(article) and len(norm) > len(article):
            norm = norm[len(article) :]
    return norm


def entity_id(name: str) -> str:
    """The id of a new entity: a hash of its `name_key`, so two workers creating the same entity at once
    create one."""
    return hashlib.sha256(name_key(name).encode("utf-8", "surrogatepass")).hexdigest()[:16]


class Entity(BaseModel):
    """Someone or something the user talked about. `mentions` counts the facts and turns naming it (the ids
    are in the store)."""

    model_config = _FROZEN

    id: str = Field(min_length=1, max_length=64)
    name: str = Field(min_length=1, max_length=200)
    type: str = "thing"
    aliases: tuple[str, ...] = ()
    created_at: float = Field(default_factory=time.time)
    mentions: int = 0


class Relation(BaseModel):
    """`source -relation-> target` between two entities. `valid_at`/`invalid_at`: when it is true in the
    world; `created_at`/`expired_at`: when we learned it and when we retired it. Provenance: the fact
    and turns it was learned from."""

    model_config = _FROZEN

    id: str = Field(default_factory=lambda: uuid.uuid4().hex, min_length=1, max_length=64)
    source: str
    relation: str = Field(min_length=1, max_length=64)
    target: str
    valid_at: float | None = None
    invalid_at: float | None = None
    created_at: float = Field(default_factory=time.time)
    expired_at: float | None = None
    fact_id: str | None = None
    source_turns: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """What makes two relations the same statement."""
        return f"{self.source}|{self.relation}|{self.target}"

    @property
    def current(self) -> bool:
        return self.expired_at is None

    def true_at(self, when: float) -> bool:
        """Whether it held at `when`, as far as we know now."""
        return held_at(when, self.valid_at, self.invalid_at, self.created_at, self.expired_at)


class EntityWrite(BaseModel):
    """An entity to resolve or create: its `name_key`, the keys of its aliases (other than the name's),
    the entity to create when none is known, and the aliases to merge into a known one."""

    model_config = ConfigDict(frozen=True)

    key: str = Field(min_length=1)
    alias_keys: tuple[str, ...] = ()
    entity: Entity
    aliases: tuple[str, ...] = ()


@runtime_checkable
class GraphStore(Protocol):
    """Users' graphs. Every method raises `StoreError` when the store cannot answer; a user's graph is
    reachable only through that user's id."""

    async def upsert(self, user_id: str | bytes, entities: Sequence[EntityWrite]) -> list[str]:
        """Atomically, in order, the id of each entity: the one its key (or else the first of its alias
        keys) names already, which gains the new `aliases` (its name and known aliases aside, in order), or
        else `entity` created (kept as it is when its id exists). The key and alias keys then name the id
        where they named nothing."""
        ...

    async def mention(self, user_id: str | bytes, pairs: Sequence[tuple[str, str]]) -> int:
        """Record (entity id, document id) pairs: the document names the entity. How many were new."""
        ...

    async def relate(self, user_id: str | bytes, relation: Relation, audit: AuditEntry) -> str | None:
        """Atomically: the id of the current relation with `relation.key` when there is one (nothing
        written); else store `relation` as current, adjacent to both ends, audit it (subject "relation",
        naming `relation.id`), and None."""
        ...

    async def retire(
        self, user_id: str | bytes, relation_id: str, now: float, invalid_at: float | None, audit: AuditEntry
    ) -> int:
        """Atomically retire a current relation at `now` (invalid at `invalid_at`, else `now`), audited:
        1, 0 when retired already (nothing written), -1 when there is no such relation."""
        ...

    async def restore(self, user_id: str | bytes, relation_id: str, audit: AuditEntry) -> int:
        """Atomically make a retired relation current again, audited: 1, 0 when it is current, -1 when there
        is no such relation, -2 when a current relation says the same (nothing written but on 1)."""
        ...

    async def relations(self, user_id: str | bytes, ids: Sequence[str]) -> list[Relation]:
        """The relations of `ids` that exist (retired ones with their state), in the order of `ids`."""
        ...

    async def all_relations(self, user_id: str | bytes) -> list[Relation]:
        """Every relation of the user, retired ones included, by id."""
        ...

    async def entities(self, user_id: str | bytes, ids: Sequence[str]) -> dict[str, Entity]:
        """The entities of `ids` that exist, each with `mentions` = how many documents name it."""
        ...

    async def entity_ids(self, user_id: str | bytes) -> list[str]:
        """The ids of every entity of the user."""
        ...

    async def resolve(self, user_id: str | bytes, keys: Iterable[str]) -> dict[str, str]:
        """Entity ids by name key, for the keys that name one."""
        ...

    async def named_in(self, user_id: str | bytes, docs: Sequence[str]) -> dict[str, list[str]]:
        """The entity ids each document names, in the order they were recorded (documents naming none
        are left out)."""
        ...

    async def mentions(self, user_id: str | bytes, entities: Sequence[str]) -> dict[str, list[str]]:
        """The ids of the documents naming each entity, sorted (every entity asked for is a key)."""
        ...

    async def adjacent(self, user_id: str | bytes, centres: Sequence[str]) -> set[str]:
        """The ids of the relations (current or not) touching any of `centres`."""
        ...

    async def applied(self, user_id: str | bytes, batch: str) -> bool:
        """Whether a batch (by content hash) was marked applied."""
        ...

    async def set_applied(self, user_id: str | bytes, batch: str) -> None: ...
