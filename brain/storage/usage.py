"""Usage storage (`UsageStore`): LLM calls and tokens spent for each user, per chat and model, kept as
running totals (bounded: one row per chat and model, however long the user chats). Answers count in their
chat; memory work (summaries, fact and graph extraction) counts in the chat it was done for. A turn's
usage is written with the turn itself (`WriteBatch.spent`: no extra round trip); work outside a turn adds
its own. A chat's rows live and die with the chat."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from brain.llm.usage import Usage

__all__ = ["ModelUsage", "UsageRow", "UsageStore"]


class ModelUsage(BaseModel):
    """What calls to one model spent."""

    model_config = ConfigDict(frozen=True)

    model: str = Field(min_length=1, max_length=256)
    calls: int = Field(ge=0)
    prompt_tokens: int = Field(0, ge=0)
    completion_tokens: int = Field(0, ge=0)


class UsageRow(BaseModel):
    """What one chat of a user spent on one model."""

    model_config = ConfigDict(frozen=True)

    chat_id: str | bytes
    model: str
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@runtime_checkable
class UsageStore(Protocol):
    """Running usage totals per user. `StoreError` when the store cannot answer."""

    async def add(
        self, user_id: str | bytes, chat_id: str | bytes, model: str, usage: Usage, calls: int = 1
    ) -> None:
        """Add `calls` calls and their tokens to the (chat, model) row of the user (atomically)."""
        ...

    async def rows(self, user_id: str | bytes, chat_id: str | bytes | None = None) -> list[UsageRow]:
        """The user's rows (of one chat with `chat_id`), by chat (its raw bytes) then model; chat ids come
        back as `brain.keys.readable_id` gives them."""
        ...

    async def drop(self, user_id: str | bytes, chat_id: str | bytes | None = None) -> int:
        """Delete the user's rows (of one chat with `chat_id`); how many there were."""
        ...
