"""The one module a MetaGPT user imports instead of MetaGPT's: the same names, used the same way.

    from roles.metagpt import Assistant, BrainMemory, Context, LLM, Message, TalkAction, any_to_str

    ctx = Context()                      # settings from the environment and config file
    ctx.kwargs.language = "Chinese"
    role = Assistant(language="Chinese", context=ctx)
    await role.talk("帮我在那里订酒店")
    while await role.think():
        message = await role.act()       # cause_by == any_to_str(TalkAction)
    await ctx.aclose()

What differs from MetaGPT, on purpose: memory is appended turn by turn and never expires unless
configured; a failed read or write is an error, never an empty memory; `is_related` answers only a strict
TRUE/FALSE; the rewrite goes beside the user's words instead of being glued before them; skills are tools
of the one talk call (no classifier call).
"""

from __future__ import annotations

from typing import Any

from actions.metagpt_talk import TalkAction
from brain.message import Message
from roles.assistant import Assistant
from roles.brain_memory import BrainMemory
from roles.context import Context, ContextLLM
from roles.home import RoleContext, SkillAction

__all__ = [
    "LLM",
    "Assistant",
    "BrainMemory",
    "Context",
    "Message",
    "RoleContext",
    "SkillAction",
    "TalkAction",
    "any_to_str",
]


def LLM(context: Context | None = None) -> ContextLLM:
    """The configured LLM client (of `context`, else the process's `Context.default()`), opened on its
    first call and closed with its context."""
    return ContextLLM(context or Context.default())


def any_to_str(value: Any) -> str:
    """The name messages use for an action or role (`cause_by`, `sent_from`): a string as is, a class by
    its name, an action or other object by its `name` or its class's name."""
    if isinstance(value, str):
        return value
    if isinstance(value, type):
        return value.__name__
    name = getattr(value, "name", None)
    return name if isinstance(name, str) and name else type(value).__name__
