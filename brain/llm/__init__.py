"""The LLM gateway: the Protocol, the OpenAI-compatible client, a scripted model, tokens and usage. The
public names below are imported on first use (`brain.lazy`): `brain.llm.local` is read before a chat's
imports, so that the embedded model starts loading while the OpenAI SDK is imported."""

from typing import TYPE_CHECKING

from brain.lazy import lazy_exports

if TYPE_CHECKING:
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
else:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "brain.llm.endpoint": ("create_openai_client",),
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
            "brain.llm.rerank": ("Rerank",),
            "brain.llm.tokens": ("Tokenizer",),
            "brain.llm.usage": ("CallRecord", "Usage", "UsageLedger", "UsageTotals"),
        },
    )

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
