"""Usage as memory keeps it: what a unit of work spent (`brain.llm.usage.spending`), added to the user's
running totals per chat and model (`brain.storage.UsageStore`)."""

from __future__ import annotations

import logging

from brain.errors import StoreError
from brain.llm.usage import Spending, Usage
from brain.storage.usage import ModelUsage, UsageStore

__all__ = ["model_usage", "record_spending"]

_log = logging.getLogger("brain.usage")


def model_usage(spent: Spending) -> tuple[ModelUsage, ...]:
    """What was spent, per model, as the chat's usage rows take it. Pure."""
    return tuple(  # counted by us, not read from outside: no validation needed
        ModelUsage.model_construct(model=m, calls=c, prompt_tokens=p, completion_tokens=d)
        for m, c, p, d in spent.by_model()
    )


async def record_spending(
    store: UsageStore | None, user_id: str | bytes, chat_id: str | bytes, spent: Spending
) -> None:
    """Add what was spent to the user's usage; nothing without a store or a call. A store failure is
    logged, never raised: usage is bookkeeping, not the work it counts."""
    if store is None or not spent.calls:
        return
    try:
        for row in model_usage(spent):
            usage = Usage(prompt_tokens=row.prompt_tokens, completion_tokens=row.completion_tokens)
            await store.add(user_id, chat_id, row.model, usage, row.calls)
    except StoreError as exc:
        _log.warning("recording usage failed: %s", exc)
