"""`Role`: observe -> think -> act. Messages route by `cause_by`, `sent_from` and `send_to`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from actions.base import Action, ActionContext, Persona, transcript
from brain.errors import LLMError
from brain.llm.protocol import LLM, ChatMessage
from brain.message import Message

if TYPE_CHECKING:
    from roles.environment import Environment

__all__ = ["EVERYONE", "USER_REQUIREMENT", "Role", "parse_choice", "render_choice"]

USER_REQUIREMENT = "UserRequirement"
EVERYONE = "<all>"


def render_choice(
    persona: Persona, actions: Sequence[Action], history: Sequence[Message]
) -> list[ChatMessage]:
    """The react-mode prompt: pick the next action by number, or -1 to stop. Pure."""
    options = "\n".join(f"{i}: {a.name} - {a.desc}" for i, a in enumerate(actions))
    system = (
        f"{persona.system_prompt()}\nChoose what to do next. Options:\n{options}\n"
        "Reply with the number of the option only, or -1 if the work is done."
    )
    return [
        ChatMessage(role="system", content=system),
        ChatMessage(role="user", content=transcript(history[-20:]) or "(nothing yet)"),
    ]


def parse_choice(reply: str, n_options: int) -> int:
    """Strict: an integer in [-1, n_options); anything else is an `LLMError`."""
    match = re.fullmatch(r"\s*(-?\d+)\s*\.?\s*", reply)
    if match is None or not -1 <= int(match.group(1)) < n_options:
        raise LLMError(f"expected an option number from -1 to {n_options - 1}, got {reply[:60]!r}")
    return int(match.group(1))


class Role:
    """A named agent with actions. `react_mode`: `by_order` runs its actions in order each time it has
    news; `react` lets the LLM pick the next action (at most `max_react_loop` per run)."""

    def __init__(
        self,
        *,
        llm: LLM,
        name: str,
        profile: str = "",
        goal: str = "",
        constraints: str = "",
        desc: str = "",
        language: str = "English",
        actions: Sequence[Action] = (),
        watch: Sequence[str] = (USER_REQUIREMENT,),
        react_mode: Literal["react", "by_order"] = "by_order",
        max_react_loop: int = 3,
    ) -> None:
        self.llm = llm
        self.persona = Persona(
            name=name, profile=profile, goal=goal, constraints=constraints, desc=desc, language=language
        )
        self.actions = list(actions)
        self.watch = set(watch)
        self.react_mode = react_mode
        self.max_react_loop = max_react_loop
        self.env: Environment | None = None
        self.inbox: list[Message] = []
        self.history: list[Message] = []  # this role's mailbox, as MetaGPT keeps it

    @property
    def name(self) -> str:
        return self.persona.name

    def is_watching(self, message: Message) -> bool:
        """Addressed to this role by name, or (addressed to everyone) caused by an action it watches."""
        if message.sent_from == self.name:
            return False
        if message.send_to and EVERYONE not in message.send_to:
            return self.name in message.send_to
        return message.cause_by in self.watch

    def put_message(self, message: Message) -> None:
        self.inbox.append(message)

    @property
    def has_news(self) -> bool:
        return bool(self.inbox)

    async def _observe(self) -> list[Message]:
        news, self.inbox = self.inbox, []
        self.history.extend(news)
        return news

    async def _think(self) -> Action | None:
        """The next action to run; None when there is nothing to do."""
        if not self.actions:
            return None
        if len(self.actions) == 1:
            return self.actions[0]
        reply = await self.llm.complete(render_choice(self.persona, self.actions, self.history), max_tokens=5)
        choice = parse_choice(reply.content or "", len(self.actions))
        return None if choice < 0 else self.actions[choice]

    async def _act(self, action: Action) -> Message:
        text = await action.run(self.llm, ActionContext(persona=self.persona, messages=tuple(self.history)))
        message = Message(role="assistant", content=text, cause_by=action.name, sent_from=self.name)
        self.history.append(message)
        if self.env is not None:
            self.env.publish_message(message)
        return message

    async def run(self, with_message: Message | str | None = None) -> Message | None:
        """Observe, then think and act; returns the last message produced, None when there was no news."""
        if with_message is not None:
            self.put_message(
                with_message
                if isinstance(with_message, Message)
                else Message(content=with_message, cause_by=USER_REQUIREMENT, sent_from="Human")
            )
        if not await self._observe():
            return None
        produced: Message | None = None
        if self.react_mode == "by_order":
            for action in self.actions:
                produced = await self._act(action)
            return produced
        for _ in range(self.max_react_loop):
            chosen = await self._think()
            if chosen is None:
                break
            produced = await self._act(chosen)
        return produced

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"
