"""`AuditLog`: each user's audit trail in memory, the counterpart of the Redis audit stream that facts and
graph relations share. Event ids are "<ms>-<n>" and strictly increase per trail, as stream ids do."""

from __future__ import annotations

import time
from typing import Literal

from brain.backends.memory.keyspace import Keyspace
from brain.keys import facts_base
from brain.storage.facts import AuditEntry, AuditEvent

__all__ = ["AuditLog"]


class AuditLog:
    """Per-user trails under `<facts base>:audit` in the keyspace: a list of events, oldest first."""

    def __init__(self, space: Keyspace, prefix: str) -> None:
        self._space = space
        self._prefix = prefix

    def _name(self, user_id: str | bytes) -> str:
        return f"{facts_base(self._prefix, user_id)}:audit"

    def append(
        self,
        user_id: str | bytes,
        subject_id: str,
        entry: AuditEntry,
        *,
        subject: Literal["fact", "relation"] = "fact",
        old_text: str | None = None,
        new_text: str | None = None,
    ) -> AuditEvent:
        """Append `entry` as an event naming `subject_id` (`AuditEvent.fact_id`) and return it; `old_text`
        and `new_text`, when given, are the store's and win over the entry's."""
        trail = self._space.setdefault(self._name(user_id), list[AuditEvent])
        ms, n = int(time.time() * 1000), 0
        if trail:
            last_ms, last_n = (int(part) for part in trail[-1].id.split("-"))
            if ms <= last_ms:  # same millisecond, or the clock stepped back: count on, as XADD does
                ms, n = last_ms, last_n + 1
        event = AuditEvent(
            id=f"{ms}-{n}",
            event=entry.event,
            fact_id=subject_id,
            old_fact_id=entry.old_fact_id,
            old_text=entry.old_text if old_text is None else old_text,
            new_text=entry.new_text if new_text is None else new_text,
            actor=entry.actor,
            reason=entry.reason,
            source_turns=entry.source_turns,
            at=ms / 1000,
            undoes=entry.undoes,
            subject=subject,
        )
        trail.append(event)
        return event

    def forget(self, user_id: str | bytes, subject_ids: set[str]) -> None:
        """Remove every event naming one of `subject_ids` (as `fact_id` or `old_fact_id`)."""
        trail = self._space.get(self._name(user_id), list) or []
        kept = [e for e in trail if not ({e.fact_id, e.old_fact_id} & subject_ids)]
        if kept:
            trail[:] = kept
        else:
            self._space.delete(self._name(user_id))

    def events(self, user_id: str | bytes) -> list[AuditEvent]:
        """The user's events, oldest first."""
        return list(self._space.get(self._name(user_id), list) or [])
