"""A plain streaming chat loop over the configured LLM.

The conversation lives in this process only; the memory-backed chat comes with `BrainMemory`.
"""

from __future__ import annotations

import asyncio
from typing import TextIO

from brain.llm import ChatMessage, Completion, TextDelta
from brain.openai_llm import OpenAILLM
from brain.settings import Settings

__all__ = ["run_plain_chat"]

SYSTEM = "You are a helpful assistant."


async def run_plain_chat(settings: Settings, stdin: TextIO, stdout: TextIO) -> int:
    """Read lines from `stdin`, stream each reply to `stdout`; `/exit` or end of input stops."""
    interactive = stdin.isatty()
    messages = [ChatMessage(role="system", content=SYSTEM)]
    async with OpenAILLM.from_settings(settings.llm) as llm:
        while True:
            if interactive:
                stdout.write("you> ")
                stdout.flush()
            line = await asyncio.to_thread(stdin.readline)
            if not line or line.strip() in {"/exit", "/quit"}:
                return 0
            if not line.strip():
                continue
            messages.append(ChatMessage(role="user", content=line.strip()))
            async for event in llm.stream(messages):
                if isinstance(event, TextDelta):
                    stdout.write(event.text)
                    stdout.flush()
                elif isinstance(event, Completion):
                    messages.append(event.as_message())
            stdout.write("\n")
            stdout.flush()
