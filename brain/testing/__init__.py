"""Test helpers for code built on brain-assistant: `ScriptedLLM` answers from a script and records calls."""

from brain.llm.scripted import (
    Reply,
    ScriptedCall,
    ScriptedLLM,
    ScriptExhausted,
    echo_everything,
    obey_word_limit,
    tool_calls,
)

__all__ = [
    "Reply",
    "ScriptExhausted",
    "ScriptedCall",
    "ScriptedLLM",
    "echo_everything",
    "obey_word_limit",
    "tool_calls",
]
