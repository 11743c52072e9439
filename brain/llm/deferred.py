"""An `LLM` made on its first call: work that may call no model (listing memory, creating a key) starts
none. The embedded model stands behind it where a command opens a runtime with `defer_model`: its process
(a second or more of loading, hundreds of MB) is started by the first call, not by opening."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from brain.llm.protocol import LLM, ChatMessage, Completion, TextDelta, ToolCallDelta
from brain.llm.usage import UsageLedger

__all__ = ["DeferredLLM"]


class DeferredLLM:
    """The LLM `make(usage)` gives, made once, when first called (concurrent first calls wait for the same
    one; one that failed to be made is tried again by the next call). `model` is known before; `usage` is
    one ledger from the start, which `make` is given to record into."""

    def __init__(self, model: str, make: Callable[[UsageLedger], Awaitable[LLM]]) -> None:
        self._model = model
        self._make = make
        self._usage = UsageLedger()
        self._made: LLM | None = None
        self._making = asyncio.Lock()

    @property
    def model(self) -> str:
        return self._model

    @property
    def usage(self) -> UsageLedger:
        return self._usage

    @property
    def made(self) -> bool:
        """Whether a call has made the LLM yet."""
        return self._made is not None

    async def _llm(self) -> LLM:
        if self._made is None:
            async with self._making:
                if self._made is None:
                    self._made = await self._make(self._usage)
        return self._made

    async def complete(self, messages: Sequence[ChatMessage], **options: Any) -> Completion:
        return await (await self._llm()).complete(messages, **options)

    async def stream(
        self, messages: Sequence[ChatMessage], **options: Any
    ) -> AsyncIterator[TextDelta | ToolCallDelta | Completion]:
        async for event in (await self._llm()).stream(messages, **options):
            yield event

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return await (await self._llm()).embed(texts)

    async def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        return await (await self._llm()).rerank(query, documents)
