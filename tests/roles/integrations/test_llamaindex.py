"""The LlamaIndex memory adapter against the real `BaseMemory`: messages round-trip through Redis, `aget`
keeps to its token limit, and the chat is the brain chat (its summary comes first)."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core.memory")

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory.types import BaseMemory

from brain.errors import InputError
from brain.memory.brain_memory import BrainMemory
from brain.runtime import Runtime
from roles.integrations.llamaindex_memory import BrainChatMemory

MESSAGES = [
    ChatMessage(role=MessageRole.USER, content="my cat is called Miso"),
    ChatMessage(role=MessageRole.ASSISTANT, content="Nice name!", additional_kwargs={"x": [1, 2]}),
    ChatMessage(role=MessageRole.TOOL, content="42", additional_kwargs={"tool_call_id": "c1"}),
    ChatMessage(role=MessageRole.USER, content="what is my cat called? " + "word " * 40),
]


async def test_messages_round_trip_and_token_limit(runtime: Runtime) -> None:
    memory = BrainChatMemory.from_defaults(runtime=runtime, user_id="u1", chat_id="c1", token_limit=40)
    assert isinstance(memory, BaseMemory)
    await memory.aput(MESSAGES[0])
    await memory.aput_messages(MESSAGES[1:])
    assert await memory.aget_all() == MESSAGES
    assert await memory.aget() == []  # the newest message alone is over 40 tokens (as ChatMemoryBuffer)
    wide = BrainChatMemory(runtime=runtime, user_id="u1", chat_id="c1", token_limit=10_000)
    assert await wide.aget() == MESSAGES
    await memory.aset(MESSAGES[:3])
    assert await memory.aget_all() == MESSAGES[:3]
    narrow = BrainChatMemory(runtime=runtime, user_id="u1", chat_id="c1", token_limit=12)
    assert await narrow.aget() == MESSAGES[1:3]  # 7 + 5 tokens fit; the oldest (10 more) does not
    await memory.areset()
    assert await memory.aget_all() == []
    with pytest.raises(InputError, match="async"):
        memory.get()


async def test_the_chats_summary_comes_first(runtime: Runtime) -> None:
    memory = BrainChatMemory.from_defaults(runtime=runtime, user_id="u1", chat_id="c2")
    await memory.aput_messages(MESSAGES[:2])
    brain = await BrainMemory.loads(runtime.store, "u1", "c2")
    await brain.set_history_summary("The user has a cat, Miso.")
    await memory.aput(MESSAGES[3])
    got = await memory.aget()
    assert got[0].role == MessageRole.SYSTEM and "Miso" in (got[0].content or "")
    assert got[1:] == [MESSAGES[3]]
    assert await memory.aget_all() == [MESSAGES[0], MESSAGES[1], MESSAGES[3]]
