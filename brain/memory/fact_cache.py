"""`FactCache`: the facts turns show, kept in the process while the user's facts do not change.

Every change of a user's current facts (an add, retire, restore, merge or erasure, from any process) moves
their `FactStore.generation`; a turn reads that number (one command) and uses what it cached under it: the
fact records it read (records never change while the generation holds) and, per chat, the facts it
showed for a question (the same question is not searched or embedded again), and whether the user had
no facts at all (then no question is searched while the generation holds). Entries under an older
generation are dropped when met, every entry is gone after `ttl` seconds, and the cache holds at most
`users` users (least recently used out): what an erasure removed does not outlive the ttl here.
"""

from __future__ import annotations

import time
import unicodedata
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

from brain.storage.facts import Fact

__all__ = ["FactCache", "FactView"]


@dataclass
class FactView:
    """One user's cached facts under one generation."""

    generation: int
    expires: float
    facts: dict[str, Fact] = field(default_factory=dict)  # id -> record as read under `generation`
    shown: OrderedDict[tuple[str, str], tuple[str, ...]] = field(default_factory=OrderedDict)
    empty: bool = False  # a search under `generation` read an empty fact index: nothing to search for

    def shown_for(self, scope: str, question: str) -> list[Fact] | None:
        """The facts shown in `scope` (a chat, an agent) for `question` under this generation, if cached."""
        ids = self.shown.get((scope, _norm(question)))
        if ids is None or any(i not in self.facts for i in ids):
            return None
        self.shown.move_to_end((scope, _norm(question)))
        return [self.facts[i] for i in ids]

    def asked(self, scope: str, question: str) -> bool:
        """Whether facts were shown in `scope` for `question` (an answer whose generation is worth a read)."""
        return (scope, _norm(question)) in self.shown

    def show(self, scope: str, question: str, facts: Sequence[Fact], most: int) -> None:
        self.shown[(scope, _norm(question))] = tuple(f.id for f in facts)
        self.facts.update((f.id, f) for f in facts)
        while len(self.shown) > most:
            self.shown.popitem(last=False)


def _norm(question: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", question).casefold().split())


class FactCache:
    """Per-process cache of facts shown in turns, bounded: `users` users, `questions` questions per user,
    `records` fact records per user, each entry at most `ttl` seconds old."""

    def __init__(
        self, *, users: int = 10_000, questions: int = 64, records: int = 2_000, ttl: float = 60.0
    ) -> None:
        self.users, self.questions, self.records, self.ttl = users, questions, records, ttl
        self._views: OrderedDict[str | bytes, FactView] = OrderedDict()

    def view(self, user_id: str | bytes, generation: int) -> FactView:
        """The user's view under `generation`: the cached one when it is that generation's and fresh,
        else a new empty one (the old one dropped)."""
        now = time.monotonic()
        view = self._views.get(user_id)
        if (
            view is None
            or view.generation != generation
            or view.expires <= now
            or len(view.facts) > self.records
        ):
            view = FactView(generation, now + self.ttl)
            self._views[user_id] = view
        self._views.move_to_end(user_id)
        while len(self._views) > self.users:
            self._views.popitem(last=False)
        return view

    def peek(self, user_id: str | bytes) -> FactView | None:
        """The user's cached view, whatever its generation, while fresh; nothing is moved or dropped."""
        view = self._views.get(user_id)
        return view if view is not None and view.expires > time.monotonic() else None

    def forget(self, user_id: str | bytes) -> None:
        """Drop what is cached of `user_id` (their memory was erased here)."""
        self._views.pop(user_id, None)

    def __len__(self) -> int:
        return len(self._views)
