"""Actions: one LLM task per module."""

from actions.base import Action, ActionContext, Persona
from actions.prompt import PromptAction
from actions.talk import TalkAction

__all__ = ["Action", "ActionContext", "Persona", "PromptAction", "TalkAction"]
