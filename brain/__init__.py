"""brain-assistant's memory layer and what it stands on: settings, the LLM gateway (`brain.llm`), a storage
protocol per memory kind (`brain.storage`) and their backends (`brain.backends`: Redis/Valkey, and memory for
tests), search (`brain.search`), memory (`brain.memory`), key naming (`brain.keys`) and the one builder
(`brain.runtime`). The public names below are imported on first use (`brain.lazy`)."""

from typing import TYPE_CHECKING

from brain.lazy import lazy_exports

if TYPE_CHECKING:
    from brain.backends.memory import InMemoryStore, MemoryBackend
    from brain.backends.redis import RedisBackend, RedisConnection, RedisMemoryStore
    from brain.errors import BrainError, ConfigError, ConflictError, InputError, LLMError, StoreError
    from brain.llm.openai_client import OpenAILLM
    from brain.llm.protocol import (
        LLM,
        ChatMessage,
        Completion,
        JsonSchema,
        TextDelta,
        ToolCall,
        ToolCallDelta,
        ToolSpec,
    )
    from brain.llm.tokens import Tokenizer
    from brain.llm.usage import Usage, UsageLedger
    from brain.loader import load_settings, load_settings_traced
    from brain.memory.brain_memory import BrainMemory
    from brain.memory.erasure import ErasureReport
    from brain.message import Message
    from brain.runtime import Runtime, local_runtime, open_runtime
    from brain.settings import LLMSettings, LogSettings, MemorySettings, RedisSettings, Settings
    from brain.storage import Backend, ConversationStore, MemoryStore
    from brain.sync import run_sync
else:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "brain.backends.memory": ("InMemoryStore", "MemoryBackend"),
            "brain.backends.redis": ("RedisBackend", "RedisConnection", "RedisMemoryStore"),
            "brain.errors": (
                "BrainError",
                "ConfigError",
                "ConflictError",
                "InputError",
                "LLMError",
                "StoreError",
            ),
            "brain.llm.openai_client": ("OpenAILLM",),
            "brain.llm.protocol": (
                "LLM",
                "ChatMessage",
                "Completion",
                "JsonSchema",
                "TextDelta",
                "ToolCall",
                "ToolCallDelta",
                "ToolSpec",
            ),
            "brain.llm.tokens": ("Tokenizer",),
            "brain.llm.usage": ("Usage", "UsageLedger"),
            "brain.loader": ("load_settings", "load_settings_traced"),
            "brain.memory.brain_memory": ("BrainMemory",),
            "brain.memory.erasure": ("ErasureReport",),
            "brain.message": ("Message",),
            "brain.runtime": ("Runtime", "local_runtime", "open_runtime"),
            "brain.settings": ("LLMSettings", "LogSettings", "MemorySettings", "RedisSettings", "Settings"),
            "brain.storage": ("Backend", "ConversationStore", "MemoryStore"),
            "brain.sync": ("run_sync",),
        },
    )

__version__ = "0.1.0"

__all__ = [
    "LLM",
    "Backend",
    "BrainError",
    "BrainMemory",
    "ChatMessage",
    "Completion",
    "ConfigError",
    "ConflictError",
    "ConversationStore",
    "ErasureReport",
    "InMemoryStore",
    "InputError",
    "JsonSchema",
    "LLMError",
    "LLMSettings",
    "LogSettings",
    "MemoryBackend",
    "MemorySettings",
    "MemoryStore",
    "Message",
    "OpenAILLM",
    "RedisBackend",
    "RedisConnection",
    "RedisMemoryStore",
    "RedisSettings",
    "Runtime",
    "Settings",
    "StoreError",
    "TextDelta",
    "Tokenizer",
    "ToolCall",
    "ToolCallDelta",
    "ToolSpec",
    "Usage",
    "UsageLedger",
    "__version__",
    "load_settings",
    "load_settings_traced",
    "local_runtime",
    "open_runtime",
    "run_sync",
]
