"""The graph as memory shows it: a neighbourhood of entities and relations, and the pure rules of display
and spelling (`day`, `relation_name`). The records and naming rules of storage are `brain.storage.graph`'s."""

from __future__ import annotations

import re
import time
import unicodedata

from pydantic import BaseModel, ConfigDict, Field

from brain.storage.graph import Entity, Relation, entity_id, name_key

__all__ = ["Entity", "Neighbourhood", "Relation", "day", "entity_id", "name_key", "relation_name"]


def day(ts: float) -> str:
    """A moment as its UTC day, "2024-03-01". Pure."""
    return time.strftime("%Y-%m-%d", time.gmtime(ts))


def relation_name(text: str) -> str:
    """A relation as snake case: "Lives in" -> "lives_in", "姐姐" stays "姐姐". Pure."""
    norm = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"[^\w]+", "_", norm).strip("_")[:64]


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
