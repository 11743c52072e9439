"""Summarize: condense conversation text into at most N words."""

from __future__ import annotations

from actions.base import Action, ActionContext, transcript
from brain.errors import LLMError
from brain.llm.protocol import LLM, ChatMessage

__all__ = ["Summarize", "render_summarize", "summarize_text"]


def render_summarize(text: str, max_words: int, keep_language: bool = False) -> list[ChatMessage]:
    """The prompt for one summarize call. Pure."""
    system = (
        "You condense conversation transcripts for an assistant's long-term memory. Keep who said what, "
        "names, facts, numbers, dates, decisions, preferences and open questions; drop greetings and filler. "
        f"Write plain prose of at most {max_words} words."
    )
    if keep_language:
        system += " Write in the same language as the transcript."
    return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=text)]


async def summarize_text(llm: LLM, text: str, max_words: int, keep_language: bool = False) -> str:
    """One LLM call; the summary, stripped. An empty reply is an `LLMError`."""
    reply = await llm.complete(render_summarize(text, max_words, keep_language))
    summary = (reply.content or "").strip()
    if not summary:
        raise LLMError(f"{llm.model}: the summary came back empty")
    return summary


class Summarize(Action):
    """As a role action: summarize the messages received."""

    def __init__(self, max_words: int = 200, keep_language: bool = False) -> None:
        super().__init__("Summarize", "summarize the conversation")
        self.max_words, self.keep_language = max_words, keep_language

    async def run(self, llm: LLM, context: ActionContext) -> str:
        return await summarize_text(llm, transcript(context.messages), self.max_words, self.keep_language)
