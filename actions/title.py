"""Title: a short title for a conversation."""

from __future__ import annotations

from brain.errors import LLMError
from brain.llm.protocol import LLM, ChatMessage

__all__ = ["make_title", "render_title"]


def render_title(text: str, max_words: int, language: str | None = None) -> list[ChatMessage]:
    lang = f" in {language}" if language else " in the conversation's language"
    system = (
        f"Give this conversation a title{lang} of at most {max_words} words. "
        "Reply with the title only, no quotes."
    )
    return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=text)]


async def make_title(llm: LLM, text: str, max_words: int = 5, language: str | None = None) -> str:
    reply = await llm.complete(render_title(text, max_words, language), max_tokens=max(16, max_words * 4))
    title = (reply.content or "").strip().strip("\"'").strip()
    if not title:
        raise LLMError(f"{llm.model}: the title came back empty")
    return " ".join(title.split()[: max_words * 2])
