"""`Action`: one LLM task. Its prompt is rendered by a pure function; `run` sends it to an injected LLM."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from brain.llm.protocol import LLM
from brain.message import Message, speaker

__all__ = ["FENCE", "Action", "ActionContext", "Persona", "fenced", "transcript"]

FENCE = "`" * 3


class Persona(BaseModel):
    """Who a role is; rendered into the system prompt."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = "Lily"
    profile: str = "An assistant"
    goal: str = "Help to solve problem"
    constraints: str = "Talk in {language}"
    desc: str = ""
    language: str = "English"

    def system_prompt(self) -> str:
        """Pure. Empty parts are left out (MetaGPT said "You are None." when desc was unset)."""
        parts = [
            f"You are {self.name}, {self.profile[:1].lower() + self.profile[1:]}."
            if self.profile
            else f"You are {self.name}."
        ]
        if self.desc:
            parts.append(self.desc)
        if self.goal:
            parts.append(f"Your goal: {self.goal}.")
        constraints = self.constraints.replace("{language}", self.language)
        if constraints:
            parts.append(f"Constraints: {constraints}.")
        parts.append(f"Answer in {self.language}.")
        return " ".join(p.replace("..", ".") for p in parts)


class ActionContext(BaseModel):
    """What an action works on: the acting role's persona and the messages it received."""

    model_config = ConfigDict(frozen=True)

    persona: Persona
    messages: tuple[Message, ...] = ()


def fenced(text: str) -> str:
    """`text` as a quoted block of data in a prompt: inside a code fence it cannot close. Pure."""
    inner = text.replace(FENCE, "'")
    return f"{FENCE}\n{inner}\n{FENCE}"


def transcript(messages: Sequence[Message]) -> str:
    """Messages as `Speaker: text` lines. Pure."""
    return "\n".join(f"{speaker(m)}: {m.content}" for m in messages)


class Action(ABC):
    """One LLM task of a role."""

    def __init__(self, name: str | None = None, desc: str = "") -> None:
        self.name = name or type(self).__name__
        self.desc = desc

    @abstractmethod
    async def run(self, llm: LLM, context: ActionContext) -> str:
        """The action's output text. Raises `LLMError` when the model fails."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"
