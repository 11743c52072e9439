"""TalkAction: the assistant's answer. One LLM call per ordinary turn; skills are offered as tools in it.

The prompt: one system message, the persona followed by the memory section (`actions.memory_section`:
knowledge, summary, facts and whatever else a mode recalled, as data with provenance, never as assistant
turns or system messages of their own); recent turns as real chat messages, newest kept first within a token
budget; the user text once.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Literal

from actions.base import Action, ActionContext, Persona
from actions.memory_section import MemoryItem, fact_items, knowledge_item, summary_item, with_memory
from brain.errors import LLMError
from brain.llm.protocol import LLM, ChatMessage, Completion, TextDelta, ToolCall, ToolSpec
from brain.llm.tokens import Tokenizer
from brain.memory.steps import STEPS, as_chat
from brain.message import Message
from brain.process_caches import remember
from brain.storage.facts import Fact

__all__ = ["Refit", "TalkAction", "ToolRunner", "memory_items", "render_system", "render_talk"]

ToolRunner = Callable[[ToolCall], Awaitable[str]]
Refit = Callable[[list[ChatMessage]], Awaitable[list[ChatMessage]]]
"""The prompt for the next call of a turn, given the turn's tool rounds so far."""
_CACHED_CHARS = 4_096


@remember
@functools.lru_cache(maxsize=20_000)  # as many as the parsed turns kept (`conversation_records`)
def _chat_message(role: Literal["user", "assistant"], content: str) -> ChatMessage:
    """A turn as a prompt message; the same frozen value for the same turn on every turn of a chat. For a
    text of at most `_CACHED_CHARS` only: 20,000 long messages would hold gigabytes."""
    return ChatMessage(role=role, content=content)


@remember
@functools.lru_cache(maxsize=1_024)
def _system_message(persona: Persona) -> ChatMessage:
    """The persona's system message, made once per persona (a frozen value) rather than every turn."""
    return ChatMessage(role="system", content=persona.system_prompt())


def render_system(persona: Persona, memory: Sequence[MemoryItem] = (), instructions: str = "") -> ChatMessage:
    """The one system message: the persona, `instructions` (a mode's), then the memory section. Pure."""
    if not instructions and not any(item.text.strip() for item in memory):
        return _system_message(persona)
    head = _system_message(persona).content or ""  # the persona's prompt, made once per persona
    head = f"{head}\n{instructions}" if instructions else head
    return ChatMessage(role="system", content=with_memory(head, memory))


def memory_items(
    knowledge: str = "", summary: str = "", facts: Sequence[Fact | str] = (), more: Sequence[MemoryItem] = ()
) -> list[MemoryItem]:
    """What a turn recalled, in the memory section's order: knowledge, summary, `more` (a mode's: core
    blocks, search results), facts. Pure."""
    items = [knowledge_item(knowledge)] if knowledge.strip() else []
    if summary.strip():
        items.append(summary_item(summary))
    return [*items, *more, *fact_items(facts)]


def render_talk(
    *,
    persona: Persona,
    text: str,
    tokenizer: Tokenizer,
    history_budget: int,
    knowledge: str = "",
    summary: str = "",
    history: Sequence[Message] = (),
    history_tokens: Sequence[int] | None = None,
    facts: Sequence[Fact | str] = (),
    memory: Sequence[MemoryItem] = (),
    instructions: str = "",
    resolved: str | None = None,
) -> list[ChatMessage]:
    """The answer prompt. Pure. Everything recalled (`knowledge`, `summary`, `memory`, `facts`) goes in the
    system message's memory section, after the persona and `instructions`. Recent turns are dropped
    oldest-first to fit `history_budget` tokens (a kept tool step's results leave with its call:
    `brain.memory.steps`); `history_tokens` (the stored cost of each turn) saves counting them again.
    `resolved`, the text made self-contained by `refine_memory`, goes beside the user's own words (which
    are sent once)."""
    recalled = bool(facts or memory or knowledge.strip() or summary.strip())
    items = memory_items(knowledge, summary, facts, memory) if recalled else ()
    messages = [render_system(persona, items, instructions)]
    recent: list[ChatMessage] = []
    used = 0
    costs = (
        history_tokens if history_tokens is not None else [tokenizer.count_turn(m.content) for m in history]
    )
    for m, cost in zip(reversed(history), reversed(costs), strict=True):
        if used + cost > history_budget:
            break
        used += cost
        role: Literal["user", "assistant"] = "assistant" if m.role == "assistant" else "user"
        if m.cause_by in STEPS:  # is_step, without a call a message
            recent.append(as_chat(m))
        elif len(content := m.content) <= _CACHED_CHARS:
            recent.append(_chat_message(role, content))
        else:
            recent.append(ChatMessage(role=role, content=content))
    while recent and recent[-1].role == "tool":  # results whose call is out of the window go with it
        recent.pop()
    messages.extend(reversed(recent))
    if resolved and resolved.strip() != text.strip():
        text = f"{text}\n\n(In this conversation, this means: {resolved})"
    messages.append(ChatMessage(role="user", content=text))
    return messages


class TalkAction(Action):
    """Answer, calling tools as the model asks, at most `max_steps` tool rounds."""

    def __init__(
        self, tools: Sequence[ToolSpec] = (), run_tool: ToolRunner | None = None, max_steps: int = 4
    ):
        super().__init__("TalkAction", "answer the user")
        self.tools = tuple(tools)
        self.run_tool = run_tool
        self.max_steps = max_steps

    async def stream(
        self,
        llm: LLM,
        prompt: list[ChatMessage],
        *,
        trail: list[ChatMessage] | None = None,
        refit: Refit | None = None,
    ) -> AsyncIterator[TextDelta | Completion]:
        """Text deltas of the answer and the `Completion` of each call (a tool round's, then the final
        one, which has no tool calls). Tool rounds run in between; their messages (the model's calls, the
        results) are appended to `trail`. Each call sends `prompt` and the trail, or with `refit` whatever
        `await refit(trail)` returns (a memory that fits its budget again around a growing turn)."""
        trail = [] if trail is None else trail
        for step in range(self.max_steps + 1):
            tools = self.tools if self.run_tool is not None and step < self.max_steps else ()
            messages = await refit(trail) if refit is not None else [*prompt, *trail]
            final: Completion | None = None
            async for event in llm.stream(messages, tools=tools):
                if isinstance(event, Completion):
                    final = event
                elif isinstance(event, TextDelta):
                    yield event
            if final is None:
                raise LLMError(f"{llm.model}: the reply stream ended without a completion")
            if not final.tool_calls or self.run_tool is None:
                yield final.model_copy(update={"tool_calls": ()}) if final.tool_calls else final
                return
            yield final
            trail.append(final.as_message())
            for call in final.tool_calls:
                trail.append(
                    ChatMessage(role="tool", tool_call_id=call.id, content=await self.run_tool(call))
                )
        raise LLMError(f"{llm.model}: still calling tools after {self.max_steps} steps")

    async def run(self, llm: LLM, context: ActionContext) -> str:
        """As a plain role action: answer the last message received."""
        if not context.messages:
            raise LLMError("TalkAction needs a message to answer")
        prompt = render_talk(
            persona=context.persona,
            text=context.messages[-1].content,
            tokenizer=Tokenizer.for_model(llm.model),
            history_budget=4_000,
            history=context.messages[:-1],
        )
        final = [e async for e in self.stream(llm, prompt) if isinstance(e, Completion)][-1]
        return final.content or ""
