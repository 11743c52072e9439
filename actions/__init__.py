"""Actions: one LLM task per module. The public names below are imported on first use (`brain.lazy`)."""

from typing import TYPE_CHECKING

from brain.lazy import lazy_exports

if TYPE_CHECKING:
    from actions.base import Action, ActionContext, Persona
    from actions.prompt import PromptAction
    from actions.relate import IsRelated, RelateAndRewrite, Rewrite
    from actions.summarize import Summarize
    from actions.summarizer import Summarizer
    from actions.talk import TalkAction
else:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "actions.base": ("Action", "ActionContext", "Persona"),
            "actions.prompt": ("PromptAction",),
            "actions.relate": ("IsRelated", "RelateAndRewrite", "Rewrite"),
            "actions.summarize": ("Summarize",),
            "actions.summarizer": ("Summarizer",),
            "actions.talk": ("TalkAction",),
        },
    )

__all__ = [
    "Action",
    "ActionContext",
    "IsRelated",
    "Persona",
    "PromptAction",
    "RelateAndRewrite",
    "Rewrite",
    "Summarize",
    "Summarizer",
    "TalkAction",
]
