"""The LLM gateway: the Protocol, the OpenAI-compatible client, a scripted model, tokens and usage."""

from brain.llm.endpoint import create_openai_client
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
from brain.llm.rerank import Rerank
from brain.llm.tokens import Tokenizer
from brain.llm.usage import CallRecord, Usage, UsageLedger, UsageTotals

__all__ = [
    "LLM",
    "CallRecord",
    "ChatMessage",
    "Completion",
    "JsonSchema",
    "OpenAILLM",
    "Rerank",
    "TextDelta",
    "Tokenizer",
    "ToolCall",
    "ToolCallDelta",
    "ToolSpec",
    "Usage",
    "UsageLedger",
    "UsageTotals",
    "create_openai_client",
]
