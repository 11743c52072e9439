"""LlamaIndex adapter (`pip install brain-assistant[llamaindex]`): `BrainChatMemory`, a `BaseMemory` whose
messages are the turns of one brain chat (`BrainMemory`), so a LlamaIndex agent's history is the chat's.

Each message is stored as one turn: the whole `ChatMessage` (its blocks, role and extra fields) as JSON in
the turn's metadata, what `aget_all` gives back, and its text as the turn's content (what summaries and
search see). `aget` gives the newest messages of the chat's window that fit `token_limit` (counted by the
runtime's tokenizer), after the chat's summary when it has one. The methods are async: LlamaIndex's agents
call them (`aget`, `aput`, ...); the sync ones are an `InputError` saying so."""

from __future__ import annotations

from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.bridge.pydantic import ConfigDict
from llama_index.core.memory.types import BaseMemory

from brain.errors import InputError
from brain.memory.brain_memory import BrainMemory
from brain.message import Message
from brain.runtime import Runtime
from brain.storage.conversation import Conversation, Turn

__all__ = ["MESSAGE_KEY", "BrainChatMemory"]

MESSAGE_KEY = "llama_index_message"
"""The metadata field of a turn that holds its `ChatMessage` as JSON."""
_PAGE = 500
_ASYNC = "BrainChatMemory is async: call aget, aget_all, aput, aput_messages, aset or areset"


def _message(message: ChatMessage) -> Message:
    role = message.role.value
    return Message(
        role=role if role in {"user", "assistant", "system"} else "tool",
        content=message.content or "",
        metadata={MESSAGE_KEY: message.model_dump(mode="json")},
    )


def _chat(message: Message) -> ChatMessage | None:
    data = message.metadata.get(MESSAGE_KEY)
    return ChatMessage.model_validate(data) if isinstance(data, dict) else None


def _chats(messages: list[Message]) -> list[ChatMessage]:
    found = (_chat(m) for m in messages)
    return [c for c in found if c is not None]


class BrainChatMemory(BaseMemory):
    """The LlamaIndex memory of the brain chat `(user_id, chat_id)` in `runtime`'s store. It holds only
    those; every call loads the chat, and writes in one atomic call. `StoreError` when the store fails."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    runtime: Runtime
    user_id: str
    chat_id: str
    token_limit: int = 3_000

    @classmethod
    def class_name(cls) -> str:
        return "BrainChatMemory"

    @classmethod
    def from_defaults(cls, **kwargs: Any) -> BrainChatMemory:
        """`BrainChatMemory(runtime=..., user_id=..., chat_id=..., token_limit=...)`."""
        memory = cls(**kwargs)
        Conversation(user_id=memory.user_id, chat_id=memory.chat_id)  # a bad id fails before any I/O
        return memory

    async def _load(self) -> BrainMemory:
        runtime = self.runtime
        return await BrainMemory.loads(
            runtime.store,
            self.user_id,
            self.chat_id,
            settings=runtime.settings.memory,
            tokenizer=runtime.tokenizer,
        )

    async def aget(self, input: str | None = None, **kwargs: Any) -> list[ChatMessage]:
        """The newest window messages within `token_limit`, oldest first, after the summary if any."""
        memory = await self._load()
        kept: list[Message] = []
        budget = self.token_limit
        for message, tokens in zip(reversed(memory.history), reversed(memory.history_tokens), strict=True):
            if tokens > budget:
                break
            kept.append(message)
            budget -= tokens
        chats = _chats(kept[::-1])
        if memory.historical_summary:
            summary = f"Summary of earlier conversation: {memory.historical_summary}"
            chats.insert(0, ChatMessage(role=MessageRole.SYSTEM, content=summary))
        return chats

    async def aget_all(self) -> list[ChatMessage]:
        """Every message of the chat not taken back, oldest first."""
        memory = await self._load()
        turns: list[Turn] = []
        for start in range(1, memory.turn_count + 1, _PAGE):
            turns += await memory.read_history(start, _PAGE)
        return _chats([t.message for t in turns if not t.hidden and not t.dropped])

    async def aput(self, message: ChatMessage) -> None:
        await self.aput_messages([message])

    async def aput_messages(self, messages: list[ChatMessage]) -> None:
        """Append `messages` in one atomic write."""
        if not messages:
            return
        memory = await self._load()
        for message in messages:
            memory.add_history(_message(message))
        await memory.dumps()

    async def aset(self, messages: list[ChatMessage]) -> None:
        """Replace the chat's messages by `messages` (the chat is deleted, then written)."""
        await self.areset()
        await self.aput_messages(messages)

    async def areset(self) -> None:
        await self.runtime.store.delete(Conversation(user_id=self.user_id, chat_id=self.chat_id))

    def get(self, input: str | None = None, **kwargs: Any) -> list[ChatMessage]:
        raise InputError(_ASYNC)

    def get_all(self) -> list[ChatMessage]:
        raise InputError(_ASYNC)

    def put(self, message: ChatMessage) -> None:
        raise InputError(_ASYNC)

    def set(self, messages: list[ChatMessage]) -> None:
        raise InputError(_ASYNC)

    def reset(self) -> None:
        raise InputError(_ASYNC)
