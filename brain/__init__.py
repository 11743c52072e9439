"""brain-assistant's memory layer and what it stands on: settings, LLM gateway, tokens, Redis."""

from brain.connection import RedisConnection
from brain.errors import BrainError, ConfigError, ConflictError, InputError, LLMError, StoreError
from brain.llm import LLM, ChatMessage, Completion, TextDelta, ToolCall, ToolSpec
from brain.loader import load_settings, load_settings_traced
from brain.memory import BrainMemory
from brain.message import Message
from brain.openai_llm import OpenAILLM
from brain.redis_store import RedisMemoryStore
from brain.settings import LLMSettings, LogSettings, MemorySettings, RedisSettings, Settings
from brain.store import InMemoryStore, MemoryStore
from brain.sync import run_sync
from brain.tokens import Tokenizer
from brain.usage import Usage, UsageLedger

__version__ = "0.1.0"

__all__ = [
    "LLM",
    "BrainError",
    "BrainMemory",
    "ChatMessage",
    "Completion",
    "ConfigError",
    "ConflictError",
    "InMemoryStore",
    "InputError",
    "LLMError",
    "LLMSettings",
    "LogSettings",
    "MemorySettings",
    "MemoryStore",
    "Message",
    "OpenAILLM",
    "RedisConnection",
    "RedisMemoryStore",
    "RedisSettings",
    "Settings",
    "StoreError",
    "TextDelta",
    "Tokenizer",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "UsageLedger",
    "__version__",
    "load_settings",
    "load_settings_traced",
    "run_sync",
]
