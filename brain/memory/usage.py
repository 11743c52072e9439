"""Usage as memory keeps it: what a unit of work spent (`brain.llm.usage.spending`), added to the user's
running totals per chat and model (`brain.storage.UsageStore`)."""

from __future__ import annotations

import logging

from brain.errors import StoreError
from brain.llm.usage import Spending
from brain.storage.usage import UsageStore

__all__ = ["record_spending"]

_log = logging.getLogger("brain.usage")


async def record_spending(
    store: UsageStore | None, user_id: str | bytes, chat_id: str | bytes, spent: Spending
) -> None:
    """Add what was spent to the user's usage; nothing without a store or a call. A store failure is
    logged, never raised: usage is bookkeeping, not the work it counts."""
    if store is None or not spent.calls:
        return
    try:
        for model, usage, calls in spent.by_model():
            await store.add(user_id, chat_id, model, usage, calls)
    except StoreError as exc:
        _log.warning("recording usage failed: %s", exc)
