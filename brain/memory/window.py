"""The history window of a prompt, and when turns must leave it for the summary. Pure.

A brain-mode prompt shows the summary and every unsummarized turn, so the unsummarized turns must always fit
the window: at most `memory.window_max_turns` turns and `memory.prompt_history_share` of the context in
tokens. Before a turn would break that, the oldest turns are folded into the summary (the fact worker does
it early, at `memory.summarize_share` of the window, so the reply path rarely has to). Nothing leaves the
window without being summarized first: every earlier turn stays in view, verbatim or in the summary.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from brain.settings import MemorySettings
from brain.storage.conversation import Turn

__all__ = ["Window", "older_than_recent"]


class Window(BaseModel):
    """A size in turns and tokens."""

    model_config = ConfigDict(frozen=True)

    turns: int = Field(ge=0)
    tokens: int = Field(ge=0)

    @classmethod
    def of(cls, settings: MemorySettings, context_window: int) -> Window:
        """The prompt's history window under `settings` for a model with `context_window` tokens."""
        return cls(
            turns=settings.window_max_turns, tokens=int(context_window * settings.prompt_history_share)
        )

    def share(self, fraction: float) -> Window:
        return Window(turns=int(self.turns * fraction), tokens=int(self.tokens * fraction))

    def exceeded_by(self, turns: int, tokens: int) -> bool:
        """Whether `turns` turns worth `tokens` tokens do not fit."""
        return turns > self.turns or tokens > self.tokens


def older_than_recent(turns: Sequence[Turn], keep: Window) -> list[Turn]:
    """`turns` without the newest ones that together fit in `keep` (the ones that stay verbatim)."""
    kept_tokens = 0
    for index in range(len(turns) - 1, -1, -1):
        kept_tokens += turns[index].tokens
        if kept_tokens > keep.tokens or len(turns) - index > keep.turns:
            return list(turns[: index + 1])
    return []
