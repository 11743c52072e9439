"""The graph's records and the pure rules that name things: how an entity name is matched (`name_key`),
what id an entity gets (`entity_id`), how a relation is spelled (`relation_name`)."""

from __future__ import annotations

import hashlib
import re
import time
import unicodedata
import uuid

from pydantic import BaseModel, ConfigDict, Field

from brain.memory.facts import held_at

__all__ = ["Entity", "Neighbourhood", "Relation", "day", "entity_id", "name_key", "relation_name"]

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


def day(ts: float) -> str:
    """A moment as its UTC day, "2024-03-01". Pure."""
    return time.strftime("%Y-%m-%d", time.gmtime(ts))


def relation_name(text: str) -> str:
    """A relation as snake case: "Lives in" -> "lives_in", "姐姐" stays "姐姐". Pure."""
    norm = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"[^\w]+", "_", norm).strip("_")[:64]


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


class Neighbourhood(BaseModel):
    """Entities around one or more centres and the relations between them, as of one moment."""

    model_config = ConfigDict(frozen=True)

    centres: tuple[str, ...] = ()
    entities: dict[str, Entity] = Field(default_factory=dict)
    relations: tuple[Relation, ...] = ()

    def lines(self) -> list[str]:
        """Each relation as "Caroline -sister_of-> Melanie (since 2023-05-07)"."""
        out = []
        for r in self.relations:
            source, target = self.entities.get(r.source), self.entities.get(r.target)
            text = (
                f"{source.name if source else r.source} -{r.relation}-> {target.name if target else r.target}"
            )
            if r.valid_at is not None:
                text += f" (since {day(r.valid_at)})"
            if not r.current:
                text += " [retired]"
            out.append(text)
        return out
