"""`Context`: MetaGPT's context object: `kwargs` read by attribute (language, agent_description,
agent_skills, ...), the `config` (our `Settings`), and what is built from it, opened when first needed.

`await context.runtime()` opens the store and LLM clients once per event loop (Redis clients belong to
the loop that made them) and `await context.aclose()` closes them; `async with Context() as ctx:` does
both. `Context.default()` is the process's own, from the environment (as `load_settings()` reads it),
used by `BrainMemory()` and `LLM()` when given no other.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from types import TracebackType
from typing import Any

from brain.llm.protocol import LLM, ChatMessage, Completion, TextDelta, ToolCallDelta
from brain.llm.usage import UsageLedger
from brain.loader import load_settings
from brain.runtime import Runtime, open_runtime
from brain.settings import Settings

__all__ = ["AttrDict", "Context", "ContextLLM"]


class AttrDict(dict[str, Any]):
    """A dict read and written by attribute too; a missing name reads as None (as MetaGPT's does)."""

    def __getattr__(self, name: str) -> Any:
        return self.get(name)

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value

    def __delattr__(self, name: str) -> None:
        self.pop(name, None)


class Context:
    """Configuration and options shared by roles and actions; owns what it opens."""

    _default: Context | None = None

    def __init__(self, config: Settings | None = None, kwargs: dict[str, Any] | None = None) -> None:
        self.config = config if config is not None else load_settings()
        self.kwargs = AttrDict(kwargs or {})
        self._opened: dict[asyncio.AbstractEventLoop, tuple[contextlib.AsyncExitStack, Runtime]] = {}

    @classmethod
    def default(cls) -> Context:
        """The process's context, from the environment and config file (made on first use)."""
        if cls._default is None:
            cls._default = cls()
        return cls._default

    async def runtime(self) -> Runtime:
        """The store and LLM clients of `config`, opened on first use in this event loop."""
        loop = asyncio.get_running_loop()
        if loop not in self._opened:
            stack = contextlib.AsyncExitStack()
            runtime = await stack.enter_async_context(open_runtime(self.config))
            self._opened[loop] = (stack, runtime)
        return self._opened[loop][1]

    def opened(self) -> Runtime | None:
        """The runtime already open in the running event loop, if any (opens nothing)."""
        try:
            found = self._opened.get(asyncio.get_running_loop())
        except RuntimeError:  # no running loop
            return None
        return found[1] if found is not None else None

    async def llm(self) -> LLM:
        """The configured LLM client (owned by this context)."""
        return (await self.runtime()).llm

    async def aclose(self) -> None:
        """Close what this context opened in the running event loop."""
        opened = self._opened.pop(asyncio.get_running_loop(), None)
        if opened is not None:
            await opened[0].aclose()

    async def __aenter__(self) -> Context:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


class ContextLLM:
    """The configured LLM client of a `Context`, usable before the context is opened: each call opens
    the context's runtime if needed and goes to its client (MetaGPT's `LLM()`). The context owns it."""

    def __init__(self, context: Context) -> None:
        self.context = context

    @property
    def model(self) -> str:
        return self.context.config.llm.model

    @property
    def usage(self) -> UsageLedger:
        """The client's ledger once opened in this event loop; an empty one before."""
        runtime = self.context.opened()
        return runtime.llm.usage if runtime is not None else UsageLedger()

    async def complete(self, messages: Sequence[ChatMessage], **options: Any) -> Completion:
        return await (await self.context.llm()).complete(messages, **options)

    async def stream(
        self, messages: Sequence[ChatMessage], **options: Any
    ) -> AsyncIterator[TextDelta | ToolCallDelta | Completion]:
        async for event in (await self.context.llm()).stream(messages, **options):
            yield event

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return await (await self.context.llm()).embed(texts)

    async def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        return await (await self.context.llm()).rerank(query, documents)
