"""`BrainMode`: MetaGPT's brain memory as a strategy of the turn engine: the summary, knowledge, facts and
the newest turns in one prompt, one LLM call per ordinary turn; summaries only when the window says so. The
other modes start from it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import ClassVar

from actions.talk import render_talk
from brain.memory.brain_memory import BrainMemory
from brain.message import Message
from brain.progress import Progress
from brain.runtime import Runtime
from roles.turn import Host, Turn

__all__ = ["BrainMode"]


class BrainMode:
    """A memory mode. It holds configuration only; every call gets the engine (`Host`) and the turn or
    memory it works on. Subclasses override the steps that differ."""

    name: ClassVar[str] = "brain"
    resolves: ClassVar[bool] = True  # follow-ups are rewritten self-contained (memory.rewrite_followups)

    def check(self, runtime: Runtime) -> None:
        """`ConfigError` when `runtime` lacks what the mode needs."""

    async def refine(self, host: Host, memory: BrainMemory) -> str | None:
        """Take the pending talk; first, when the unsummarized turns no longer fit the prompt's window, fold
        the oldest into the summary (the fact worker usually did it earlier): nothing falls out of view."""
        if memory.summary_due(host.window):
            await host.summarize(memory)
        return memory.pop_last_talk()

    async def answer(self, host: Host, turn: Turn) -> AsyncIterator[str]:
        """The answer's text as it streams."""
        memory, settings = turn.memory, host.memory_settings
        prompt = render_talk(
            persona=host.persona,
            text=turn.text,
            resolved=turn.resolved,
            tokenizer=host.tokenizer,
            history_budget=int(host.context_window * settings.prompt_history_share),
            knowledge=memory.get_knowledge(),
            summary=memory.historical_summary,
            history=memory.history,
            history_tokens=memory.history_tokens,
            facts=await host.recalled_facts(memory.user_id, turn.query, memory.chat_id),
        )
        async for piece in host.talk(turn, prompt):
            yield piece

    def steps(self, host: Host, turn: Turn) -> list[Message]:
        """The turn's steps to store between its question and its answer (`brain.memory.steps`): none."""
        return []

    async def committed(self, host: Host, turn: Turn) -> None:
        """Called after the turn's question and answer were stored."""

    async def take_back(self, host: Host, memory: BrainMemory, n: int) -> list[Message]:
        """Take back the newest `n` turns of a loaded chat."""
        return await memory.pop(n)

    async def written(self, host: Host, memory: BrainMemory, progress: Progress | None = None) -> None:
        """Called after turns were written outside a normal turn (an import, added turns, a rewrite)."""

    async def rewritten(self, host: Host, memory: BrainMemory, answer: Message) -> None:
        """Called under the chat's lock after the last answer was replaced by `answer`."""
