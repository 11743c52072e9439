"""MetaGPT's `TalkAction` call form: one answer to `i_context`, given knowledge and a history summary.

Built as MetaGPT's is (`TalkAction(i_context=..., knowledge=..., history_summary=..., context=ctx)`), with
`prompt` and `prompt_gpt4` that leave no `{placeholder}` unfilled and an `await run()` that returns a
`Message`. Unlike MetaGPT's, knowledge and history reach the model as labelled system context (never as
the assistant's own words), and an unset agent description is left out ("You are None." was MetaGPT's).
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from actions.base import fenced
from actions.memory_section import ASSISTANT_TURN, USER_TURN, MemoryItem, derived, knowledge_item, with_memory
from brain.errors import ConfigError, LLMError
from brain.llm.protocol import LLM, ChatMessage
from brain.message import Message

__all__ = ["HasKwargs", "TalkAction"]


class HasKwargs(Protocol):
    """What an action reads from MetaGPT's `Context`: its `kwargs` (language, agent_description...)."""

    @property
    def kwargs(self) -> Any: ...


def _kwarg(context: HasKwargs | None, name: str) -> str:
    value = getattr(context.kwargs, name, None) if context is not None else None
    return str(value).strip() if value else ""


class TalkAction(BaseModel):
    """Answer `i_context` in the context's language, with `knowledge` and `history_summary` as context."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    name: str = "TalkAction"
    i_context: str = Field(min_length=1)
    history_summary: str = ""
    knowledge: str = ""
    rsp: Message | None = None
    context: Any = None  # a `Context` (anything with `kwargs`)
    llm: Any = Field(default=None, exclude=True)  # any of our LLM clients; else run(llm=...) or the context's

    @property
    def agent_description(self) -> str:
        return _kwarg(self.context, "agent_description")

    @property
    def language(self) -> str:
        return _kwarg(self.context, "language") or "English"

    def _role_line(self) -> str:
        return f"You are {self.agent_description}. " if self.agent_description else ""

    @property
    def prompt(self) -> str:
        """The whole request as one text (MetaGPT's `prompt`): who answers, the knowledge, the history, the
        statement, and the language to answer in."""
        parts = [f"{self._role_line()}Answer the statement below as a helpful assistant."]
        if self.knowledge:
            parts.append(f"Knowledge you can rely on:\n{fenced(self.knowledge)}")
        if self.history_summary:
            parts.append(f"The conversation so far:\n{fenced(self.history_summary)}")
        parts.append(f"Statement:\n{fenced(self.i_context)}")
        parts.append(
            f"If the knowledge and conversation do not help, answer from what you know. Answer in "
            f"{self.language}, concisely, in Markdown."
        )
        return "\n\n".join(parts)

    @property
    def prompt_gpt4(self) -> str:
        """The same request in MetaGPT's tagged form ([HISTORY_BEGIN] ... [KNOWLEDGE_END])."""
        return (
            f"{self._role_line()}Answer the statement as a helpful assistant, in {self.language}.\n"
            f"[HISTORY_BEGIN]\n{self.history_summary}\n[HISTORY_END]\n"
            f"[KNOWLEDGE_BEGIN]\n{self.knowledge}\n[KNOWLEDGE_END]\n"
            f"Statement: {self.i_context}\n"
            "Use the history and knowledge where they help; say so when you do not know."
        )

    def messages(self) -> list[ChatMessage]:
        """The chat messages `run` sends: one system message (the knowledge and the conversation in its
        memory section), the statement once as the user's. Pure."""
        system = [
            f"{self._role_line()}Answer in {self.language}, concisely, in Markdown.",
            "If the information is insufficient, use the knowledge and conversation below.",
        ]
        items = [knowledge_item(self.knowledge)] if self.knowledge.strip() else []
        if self.history_summary.strip():
            so_far = derived(USER_TURN, ASSISTANT_TURN)
            items.append(MemoryItem("conversation so far", self.history_summary, so_far, lower_trust=True))
        return [
            ChatMessage(role="system", content=with_memory(" ".join(system), items)),
            ChatMessage(role="user", content=self.i_context),
        ]

    async def run(self, llm: LLM | None = None) -> Message:
        """One LLM call; the answer as an assistant `Message` caused by this action (also kept as `rsp`)."""
        client = llm or self.llm or await _context_llm(self.context)
        if client is None:
            raise ConfigError("TalkAction needs an LLM: pass llm=..., or a context that has one")
        reply = await client.complete(self.messages())
        text = (reply.content or "").strip()
        if not text:
            raise LLMError(f"{client.model}: the answer came back empty")
        self.rsp = Message(role="assistant", content=text, cause_by=self.name)
        return self.rsp


async def _context_llm(context: Any) -> LLM | None:
    """The LLM of a `Context` that opens a runtime (`await context.runtime()`), if it is one."""
    opener = getattr(context, "runtime", None)
    return (await opener()).llm if callable(opener) else None
