"""Actions: one LLM task per module."""

from actions.base import Action, ActionContext, Persona
from actions.prompt import PromptAction
from actions.relate import IsRelated, RelateAndRewrite, Rewrite
from actions.summarize import Summarize
from actions.summarizer import Summarizer
from actions.talk import TalkAction

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
