"""The one place that builds what memory stands on: the Redis connection (or embedded Valkey), the
conversation store, the LLM clients, core memory and the search indexes, all from one `Settings`.

`open_runtime` owns what it opens and closes it on exit; the CLI, deployments, agent files and the library
all build through it. `local_runtime` builds the same parts around given ones (tests, notebooks).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field

from brain.errors import ConfigError
from brain.llm.openai_client import OpenAILLM
from brain.llm.protocol import LLM
from brain.llm.tokens import Tokenizer
from brain.memory.tiers import Tiers
from brain.settings import Settings
from brain.store.connection import RedisClient, RedisConnection
from brain.store.memory_store import InMemoryStore
from brain.store.protocol import MemoryStore
from brain.store.redis_store import RedisMemoryStore

__all__ = ["Runtime", "local_runtime", "open_runtime"]


@dataclass(frozen=True)
class Runtime:
    """Everything an assistant needs, built once and shared by every call (it holds no per-call state).

    `tiers` is None without Redis (an in-memory store): the tiered memory mode needs it."""

    settings: Settings
    store: MemoryStore
    llm: LLM
    memory_llm: LLM
    tokenizer: Tokenizer
    tiers: Tiers | None = None
    llms: Mapping[str, LLM] = field(default_factory=dict)
    connection: RedisConnection | None = None

    def llm_named(self, name: str) -> LLM:
        """The LLM a deployment names: `default`, or one of `settings.llms`."""
        if name == "default":
            return self.llm
        try:
            return self.llms[name]
        except KeyError:
            raise ConfigError(f"no LLM named {name!r}; define it under llms:") from None


def _tokenizer(settings: Settings) -> Tokenizer:
    return Tokenizer.for_model(settings.llm.model, settings.llm.encoding)


def _store(settings: Settings, client: RedisClient) -> RedisMemoryStore:
    return RedisMemoryStore(
        client,
        prefix=settings.redis.key_prefix,
        ttl_seconds=settings.memory.ttl_seconds,
        max_message_bytes=settings.memory.max_message_bytes,
    )


@contextlib.asynccontextmanager
async def open_runtime(
    settings: Settings, *, llm: LLM | None = None, memory_llm: LLM | None = None, redis: bool = True
) -> AsyncIterator[Runtime]:
    """Open Redis and one client per configured LLM (unless `llm`/`memory_llm` are given: the caller owns
    those); everything opened here is closed on exit. `StoreError` when Redis is unusable. With
    `redis=False` (a team without memory) the store is in memory and there are no tiers."""
    async with contextlib.AsyncExitStack() as stack:
        connection = None
        if redis:
            connection = await RedisConnection.open(settings)
            stack.push_async_callback(connection.aclose)
        if llm is None:
            llm = await stack.enter_async_context(OpenAILLM.from_settings(settings.llm))
        named: dict[str, LLM] = {}
        for name, config in settings.llms.items():
            if memory_llm is not None and name == settings.memory.llm:
                named[name] = memory_llm
            else:
                named[name] = await stack.enter_async_context(OpenAILLM.from_settings(config))
        yield Runtime(
            settings=settings,
            store=_store(settings, connection.client)
            if connection is not None
            else InMemoryStore(max_message_bytes=settings.memory.max_message_bytes),
            llm=llm,
            memory_llm=memory_llm or named.get(settings.memory.llm, llm),
            tokenizer=_tokenizer(settings),
            tiers=_tiers(settings, connection.client, llm) if connection is not None else None,
            llms=named,
            connection=connection,
        )


def local_runtime(
    llm: LLM,
    *,
    settings: Settings | None = None,
    store: MemoryStore | None = None,
    client: RedisClient | None = None,
    memory_llm: LLM | None = None,
    tokenizer: Tokenizer | None = None,
) -> Runtime:
    """A runtime around parts the caller owns: `store` (default: a new `InMemoryStore`), and with a Redis
    `client` the tiers (and a Redis store when no store is given)."""
    settings = settings or Settings()
    if store is None:
        store = (
            _store(settings, client)
            if client is not None
            else InMemoryStore(max_message_bytes=settings.memory.max_message_bytes)
        )
    return Runtime(
        settings=settings,
        store=store,
        llm=llm,
        memory_llm=memory_llm or llm,
        tokenizer=tokenizer or _tokenizer(settings),
        tiers=_tiers(settings, client, llm) if client is not None else None,
    )


def _tiers(settings: Settings, client: RedisClient, llm: LLM) -> Tiers:
    """The memory tiers, searching with the main endpoint's embedding and rerank models when configured."""
    config = settings.llm
    return Tiers(
        client,
        prefix=settings.redis.key_prefix,
        embed=llm.embed if config.embedding_model else None,
        rerank=llm.rerank if config.rerank_model else None,
        rerank_depth=config.rerank_depth,
    )
