"""PromptAction: an action defined by an instruction (what YAML deployments declare)."""

from __future__ import annotations

from actions.base import Action, ActionContext, transcript
from brain.errors import LLMError
from brain.llm.protocol import LLM, ChatMessage

__all__ = ["PromptAction", "render_prompt_action"]


def render_prompt_action(instruction: str, context: ActionContext) -> list[ChatMessage]:
    """System: persona and the task; user: the messages received, with speakers. Pure."""
    system = f"{context.persona.system_prompt()}\nYour task now: {instruction}"
    received = transcript(context.messages) or "(nothing yet)"
    return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=received)]


class PromptAction(Action):
    def __init__(self, name: str, instruction: str, desc: str = "") -> None:
        super().__init__(name, desc or instruction)
        self.instruction = instruction

    async def run(self, llm: LLM, context: ActionContext) -> str:
        reply = await llm.complete(render_prompt_action(self.instruction, context))
        text = (reply.content or "").strip()
        if not text:
            raise LLMError(f"{llm.model}: {self.name} produced an empty reply")
        return text
