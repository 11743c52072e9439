"""Runtimes for role tests: a scripted model around an in-memory store or a real Redis client."""

from __future__ import annotations

from typing import Any

from brain import LLM, MemorySettings, Settings, local_runtime
from brain.backends.redis import RedisBackend, RedisClient
from brain.runtime import Runtime
from brain.storage.conversation import MemoryStore

RUNTIME_OPTIONS = (
    "store",
    "client",
    "memory_settings",
    "context_window",
    "memory_llm",
    "embeddings",
    "prefix",
)


def make_runtime(
    llm: LLM,
    *,
    store: MemoryStore | None = None,
    client: RedisClient | None = None,
    memory_settings: MemorySettings | None = None,
    context_window: int | None = None,
    memory_llm: LLM | None = None,
    embeddings: bool = False,
    prefix: str = "brain",
) -> Runtime:
    """`local_runtime` with the settings a test names."""
    llm_settings: dict[str, Any] = {}
    if context_window is not None:
        llm_settings["context_window"] = context_window
    if embeddings:
        llm_settings["embedding_model"] = "scripted-embeddings"
    settings = Settings.model_validate(
        {
            "llm": llm_settings,
            "memory": (memory_settings or MemorySettings()).model_dump(),
            "redis": {"key_prefix": prefix},
        }
    )
    backend = RedisBackend.for_settings(client, settings) if client is not None else None
    return local_runtime(llm, settings=settings, store=store, backend=backend, memory_llm=memory_llm)


def split_options(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(runtime options, role options) of a test helper's keyword arguments."""
    runtime = {k: v for k, v in options.items() if k in RUNTIME_OPTIONS}
    return runtime, {k: v for k, v in options.items() if k not in RUNTIME_OPTIONS}
