"""What one turn is while it runs (`Turn`, a value passed along, never kept on a shared object), and what a
memory mode may use of the engine that runs it (`Host`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Protocol

from actions.base import Persona
from actions.talk import Refit
from brain.llm.protocol import LLM, ChatMessage, Completion
from brain.llm.tokens import Tokenizer
from brain.llm.usage import Usage
from brain.memory.brain_memory import BrainMemory
from brain.memory.tiers import Tiers
from brain.memory.window import Window
from brain.message import Message
from brain.runtime import Runtime
from brain.settings import MemorySettings
from brain.storage.facts import Fact
from roles.skills import Skills

__all__ = ["Host", "Turn", "answer_id"]


def answer_id(message_id: str) -> str:
    """The id of the answer to the question with `message_id`: derived, so that two calls with the same
    message id store one answer however they race (appends are idempotent by id). Pure."""
    return f"{message_id}:answer"


_NOTHING = Usage(prompt_tokens=0, completion_tokens=0)  # frozen: every turn's until it spends


@dataclass
class Turn:
    """One call's state: whose memory, what to answer, and the reply as it is produced."""

    memory: BrainMemory
    text: str
    resolved: str | None = None  # the text made self-contained (refine_memory's rewrite), if it was
    message_id: str | None = None  # the question's id when the caller gave one (a retry finds the turn)
    answer: Message | None = None  # the answer as stored, once committed
    pieces: list[str] = field(default_factory=list)
    trail: list[ChatMessage] = field(default_factory=list)  # the turn's tool rounds (block memory keeps them)
    calls: int = 0
    usage: Usage = _NOTHING

    @property
    def query(self) -> str:
        """What memory search looks for: the rewrite when there is one, else the text."""
        return self.resolved or self.text

    def spend(self, completion: Completion) -> None:
        """Count what one LLM call of this turn cost."""
        self.calls += 1
        self.usage += completion.usage


class Host(Protocol):
    """The engine as a memory mode sees it: shared parts (never per-call state) and the steps every mode
    shares."""

    runtime: Runtime
    persona: Persona
    skills: Skills
    memory_settings: MemorySettings
    context_window: int

    @property
    def llm(self) -> LLM: ...

    @property
    def tokenizer(self) -> Tokenizer: ...

    @property
    def speaker(self) -> str: ...

    @property
    def window(self) -> Window: ...

    @property
    def tiers(self) -> Tiers:
        """The memory tiers; `ConfigError` without a backend."""
        ...

    async def summarize(self, memory: BrainMemory, *, forced: bool = False) -> None:
        """Fold the oldest unsummarized turns into the summary; a failure is logged, the turn goes on.
        After failures in a row the chat waits some turns before the next try, unless `forced`."""
        ...

    async def recalled_facts(
        self, user_id: str | bytes, text: str, chat_id: str | bytes | None = None
    ) -> list[Fact]:
        """The user's current facts relevant to `text` that a turn of `chat_id` may see, with their
        provenance (none when facts are off)."""
        ...

    def talk(self, turn: Turn, prompt: list[ChatMessage], refit: Refit | None = None) -> AsyncIterator[str]:
        """The talk action's answer for `turn`, as it streams (tool rounds go to `turn.trail`)."""
        ...
