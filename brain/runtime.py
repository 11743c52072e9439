"""The one place that builds what memory stands on: the Redis connection (or embedded Valkey), the
conversation store, the LLM clients, core memory and the search indexes, all from one `Settings`.

`open_runtime` owns what it opens and closes it on exit; the CLI, deployments, agent files and the library
all build through it. `local_runtime` builds the same parts around given ones (tests, notebooks).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import logging
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from brain.backends.memory import InMemoryStore
from brain.backends.redis import RedisBackend, RedisConnection
from brain.errors import ConfigError
from brain.llm.capabilities import Capabilities, endpoint_key
from brain.llm.deferred import DeferredLLM
from brain.llm.local import (
    LocalEmbedder,
    LocalModel,
    local_embedder_available,
    local_model_for,
)
from brain.llm.protocol import LLM, Embed
from brain.llm.tokens import Tokenizer
from brain.llm.usage import UsageLedger
from brain.memory.tiers import Tiers
from brain.process_caches import aging
from brain.search.analysis import Fusion
from brain.settings import LLMSettings, Settings
from brain.storage.backend import Backend
from brain.storage.conversation import ConversationStore

if TYPE_CHECKING:
    from brain.llm.openai_client import OpenAILLM

__all__ = ["Runtime", "local_runtime", "open_runtime"]

_log = logging.getLogger("brain.runtime")

LOCAL_FUSION = Fusion(weight=0.7, scale="range")
"""How the local embedder's vectors join hybrid search. Tuned on both retrieval dev sets
(`benchmarks/retrieval.py --embedder local`, recall@5 dev en | dev zh | dated en | dated zh; lexical 0.821
| 0.847 | 0.402 | 0.576, vector 0.701 | 0.812 | 0.626 | 0.735): weight 0.5 gave 0.857 | 0.891 | 0.579 |
0.684, 0.7 gives 0.860 | 0.907 | 0.626 | 0.724, 0.8 0.825 | 0.923 | 0.635 | 0.718 (earlier, on the first
set alone, `benchmarks/out_of_box.py` chose 0.5)."""


@dataclass(frozen=True)
class Runtime:
    """Everything an assistant needs, built once and shared by every call (it holds no per-call state).

    `tiers` is None without a backend (a team without memory keeps its conversations in memory): the
    tiered memory mode needs them. `local_model` and `embedder` name the embedded model and embedder when
    they stand in for unconfigured endpoints."""

    settings: Settings
    store: ConversationStore
    llm: LLM
    memory_llm: LLM
    tokenizer: Tokenizer
    tiers: Tiers | None = None
    llms: Mapping[str, LLM] = field(default_factory=dict)
    backend: Backend | None = None
    local_model: str | None = None
    embedder: str | None = None

    def llm_named(self, name: str) -> LLM:
        """The LLM a deployment names: `default`, or one of `settings.llms`."""
        if name == "default":
            return self.llm
        try:
            return self.llms[name]
        except KeyError:
            raise ConfigError(f"no LLM named {name!r}; define it under llms:") from None


def _tokenizer(settings: Settings) -> Tokenizer:
    return Tokenizer.for_model(settings.llm.model, settings.llm.encoding, cache=settings.home / "cache")


@contextlib.asynccontextmanager
async def open_runtime(
    settings: Settings,
    *,
    llm: LLM | None = None,
    memory_llm: LLM | None = None,
    redis: bool = True,
    local_model: LocalModel | None = None,
    defer_model: bool = False,
) -> AsyncIterator[Runtime]:
    """Open Redis and one client per configured LLM (unless `llm`/`memory_llm` are given: the caller owns
    those); everything opened here is closed on exit. `StoreError` when Redis is unusable. With
    `redis=False` (a team without memory) the conversations are kept in memory and there are no tiers.
    While it is open, the process's caches of text are emptied by age (`brain.process_caches.aging`).

    Where no endpoint is configured, the embedded model (`local.model`) answers in its place, and without
    `llm.embedding_model` the embedded embedder (`local.embedder`) embeds for search, when installed.
    `local_model` is that model when the caller made it (to `begin` its load early): used, and closed on
    exit, where the embedded model answers; else left to the caller. With `defer_model` (work that may
    call no model: listing memory, creating a key) the embedded model is started by the first call of it
    (`brain.llm.deferred`), not by opening; a `local_model` given is waited for at opening all the same."""
    if llm is None and not defer_model:
        # the client's imports (not the SDK's: `brain.llm.endpoint`), now: before the tokenizer's thread
        # starts (both hold the GIL), and while a model begun early (`local_model`) loads in its own
        # process, not after it is waited for
        importlib.import_module("brain.llm.openai_client")
    async with contextlib.AsyncExitStack() as stack:
        await stack.enter_async_context(aging())  # erased text leaves this process's caches in time
        # the tokenizer (~0.15 s of parsing) loads on a thread while this waits for Redis and the model
        tokenizer = asyncio.ensure_future(asyncio.to_thread(_tokenizer, settings))
        stack.push_async_callback(_joined, tokenizer)
        backend: Backend | None = None
        if redis:
            connection = await RedisConnection.open(settings)
            stack.push_async_callback(connection.aclose)
            backend = RedisBackend.for_settings(connection.client, settings, name=connection.masked_url)
        local_embedder = None
        if backend is not None and local_embedder_available(settings):  # no llm.embedding_model, installed
            # work that calls its model will embed: the engine loads on its thread while the model starts
            local_embedder = LocalEmbedder(preload=not defer_model)
            stack.callback(local_embedder.close)
        wanted = llm is None or (memory_llm is None and settings.llms)
        # None where an endpoint answers, or no model is installed
        embedded = local_model_for(settings) if wanted else None
        if embedded is not None and local_model is not None:  # begun early, it serves in its place
            embedded = local_model
        models = _Models(stack, embedded)
        if embedded is not None and (local_model is not None or not defer_model):
            await models.served()
        if llm is None:
            main = await models.llm(settings.llm, defer_model)
            settings = await _resolve_window(
                settings, main, embedded if not settings.llm.configured else None
            )
            llm = main
        else:
            _warn_unknown_window(settings.llm)
        named: dict[str, LLM] = {}
        for name, config in settings.llms.items():
            if memory_llm is not None and name == settings.memory.llm:
                named[name] = memory_llm
            else:
                named[name] = await models.llm(config, defer_model)
        embed: Embed | None = llm.embed if settings.llm.embedding_model else None
        embedder, fusion = settings.llm.embedding_model, None
        if local_embedder is not None:
            embed, embedder, fusion = local_embedder.embed, local_embedder.name, LOCAL_FUSION
        yield Runtime(
            settings=settings,
            store=_conversations(settings, backend),
            llm=llm,
            memory_llm=memory_llm or named.get(settings.memory.llm, llm),
            tokenizer=await tokenizer,
            tiers=_tiers(settings, backend, llm, embed, fusion) if backend is not None else None,
            llms=named,
            backend=backend,
            local_model=embedded.name if embedded is not None else None,
            embedder=embedder,
        )


class _Models:
    """The runtime's model clients, one `Capabilities` per endpoint whoever calls it, and the embedded
    model (`embedded`, where it stands in for unconfigured endpoints), started once, by `served`."""

    def __init__(self, stack: contextlib.AsyncExitStack, embedded: LocalModel | None) -> None:
        self._stack, self._embedded = stack, embedded
        self._capabilities: dict[tuple[str, str, str], Capabilities] = {}
        self._local: LocalModel | None = None
        self._starting = asyncio.Lock()

    async def served(self) -> LocalModel:
        """The embedded model, serving (started by the first caller; closed with the runtime)."""
        assert self._embedded is not None
        async with self._starting:
            if self._local is None:
                self._local = await self._stack.enter_async_context(self._embedded)
                _log.warning(
                    "no LLM configured: using the embedded tiny model %s, for trying things out; configure "
                    "a real one with OPENAI_API_KEY, or llm.base_url for a local server",
                    self._local.name,
                )
        return self._local

    async def client(self, config: LLMSettings, usage: UsageLedger | None = None) -> OpenAILLM:
        """A client of `config`'s endpoint (the embedded model's where it is unconfigured), closed with
        the runtime."""
        # imported where an endpoint is called: a runtime handed its model never loads the SDK
        from brain.llm.openai_client import OpenAILLM

        if self._embedded is not None and not config.configured:
            config = (await self.served()).llm_settings(config)
        learnt = self._capabilities.setdefault(endpoint_key(config), Capabilities(config.structured_output))
        return await self._stack.enter_async_context(
            OpenAILLM.from_settings(config, capabilities=learnt, usage=usage)
        )

    async def llm(self, config: LLMSettings, defer: bool) -> OpenAILLM | DeferredLLM:
        """`client(config)`; with `defer`, one the embedded model would answer is made on its first call."""
        if defer and self._embedded is not None and self._local is None and not config.configured:
            return DeferredLLM(self._embedded.name, functools.partial(self.client, config))
        return await self.client(config)


async def _joined(work: asyncio.Future[Any]) -> None:
    """Wait for `work`, a thread's (which cannot be cancelled), before leaving the runtime. Its failure
    was raised where the runtime awaited it; if the runtime is unwinding before that, the failure that
    unwinds it is the one reported."""
    await asyncio.wait([work])
    if not work.cancelled():
        work.exception()  # retrieved: asyncio does not report it a second time


def local_runtime(
    llm: LLM,
    *,
    settings: Settings | None = None,
    store: ConversationStore | None = None,
    backend: Backend | None = None,
    memory_llm: LLM | None = None,
    tokenizer: Tokenizer | None = None,
) -> Runtime:
    """A runtime around parts the caller owns: `store` (default: the backend's conversations, else a new
    `InMemoryStore`), and with a `backend` the tiers."""
    settings = settings or Settings()
    _warn_unknown_window(settings.llm)
    embed = llm.embed if settings.llm.embedding_model else None
    store = store or _conversations(settings, backend)
    return Runtime(
        settings=settings,
        store=store,
        llm=llm,
        memory_llm=memory_llm or llm,
        tokenizer=tokenizer or _tokenizer(settings),
        tiers=_tiers(settings, backend, llm, embed, conversations=store) if backend is not None else None,
        backend=backend,
    )


async def _resolve_window(
    settings: Settings, main: OpenAILLM | DeferredLLM, local: LocalModel | None
) -> Settings:
    """`settings` with the context window of `main` (the default LLM's client) resolved: the embedded
    model's own when it is `local`; one set or known by the model's family as it is; else what the
    endpoint's model list says, else the fallback with a warning."""
    config = settings.llm
    if local is not None:
        config = config.with_context_window(local.settings.context_window, "endpoint")
    elif config.context_window_source != "default":
        return settings
    elif (listed := await _listed(main)) is not None:
        _log.info("%s: a context window of %d tokens, as the endpoint lists it", config.model, listed)
        config = config.with_context_window(listed, "endpoint")
    else:
        _warn_unknown_window(config)
    return settings.model_copy(update={"llm": config})


async def _listed(main: OpenAILLM | DeferredLLM) -> int | None:
    assert not isinstance(main, DeferredLLM)  # only the embedded model's client is deferred
    return await main.listed_context_window()


def _warn_unknown_window(config: LLMSettings) -> None:
    """One warning when nothing knew the model's context window (it is `CONTEXT_WINDOW_FALLBACK`)."""
    if config.context_window_source == "default":
        _log.warning(
            "%s: context window unknown (no model family of that name, and the endpoint lists none); "
            "assuming %d tokens: set llm.context_window",
            config.model,
            config.context_window,
        )


def _conversations(settings: Settings, backend: Backend | None) -> ConversationStore:
    if backend is not None:
        return backend.conversations
    return InMemoryStore(max_message_bytes=settings.memory.max_message_bytes)


def _tiers(
    settings: Settings,
    backend: Backend,
    llm: LLM,
    embed: Embed | None,
    fusion: Fusion | None = None,
    *,
    conversations: ConversationStore | None = None,
) -> Tiers:
    """The memory tiers, searching with `embed` (its vectors fused as `fusion` says) and with the main
    endpoint's rerank model when configured; recall reads turns from `conversations` (the runtime's)."""
    config = settings.llm
    return Tiers(
        backend,
        conversations=conversations,
        embed=embed,
        fusion=fusion,
        rerank=llm.rerank if config.rerank_model else None,
        rerank_depth=config.rerank_depth,
    )
