"""`brain chat --persona FILE|TEXT --human FILE|TEXT [--update-persona]`: who the agent is and what it knows
of the user, as `memgpt run --persona --human` sets them (a path that exists is read, else the text itself).

In `memory.mode: tiered` they are the core memory blocks `persona` and `human` of the user with this agent,
stored: a new agent (no block of its own yet, no turn in the chat) gets them; an existing one whose block
differs changes only with `--update-persona`, else the chat does not start (a one-line refusal). The other
modes keep no persona: the texts join this run's system prompt (the persona's description). Without a flag,
the settings' `agent.persona` and `agent.human` (YAML) are used, as seeds only: they never change an
existing agent's blocks (a flag with `--update-persona` does)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from brain.memory.core import edit_block
from brain.settings import Settings
from roles.access import agent_of
from roles.assistant import Assistant
from roles.modes import TieredMode

__all__ = ["PersonaChoice", "apply_persona", "assistant_options"]


@dataclass(frozen=True)
class PersonaChoice:
    """The `--persona`, `--human` and `--update-persona` of a `brain chat`."""

    persona: str | None = None
    human: str | None = None
    update: bool = False
    seeds: frozenset[str] = frozenset()  # labels whose text came from the settings (`agent:`), not a flag

    @classmethod
    def of(cls, args: argparse.Namespace, settings: Settings | None = None) -> PersonaChoice:
        """The flags, else the settings' `agent.persona`/`agent.human` (those only seed a new agent)."""
        agent = settings.agent if settings is not None else None
        persona = args.persona or (agent.persona if agent else None)
        human = args.human or (agent.human if agent else None)
        seeds = {
            label
            for label, flag, value in (("persona", args.persona, persona), ("human", args.human, human))
            if flag is None and value is not None
        }
        return cls(persona, human, args.update_persona, frozenset(seeds))

    def texts(self) -> dict[str, str]:
        """The texts given, by block label."""
        given = {"persona": self.persona, "human": self.human}
        return {label: text for label, text in given.items() if text is not None}


def assistant_options(settings: Settings, choice: PersonaChoice) -> dict[str, Any]:
    """`Assistant` options for a mode that keeps no persona: the texts as the persona's description."""
    if settings.memory.mode == "tiered" or not choice.texts():
        return {}
    parts = [choice.persona] if choice.persona else []
    if choice.human:
        parts.append(f"What you know about the user: {choice.human}")
    return {"desc": "\n".join(parts)}


async def apply_persona(assistant: Assistant, user: str, chat: str, choice: PersonaChoice) -> str | None:
    """Store the chosen blocks (tiered mode): None, or the refusal when an existing agent's block differs
    and `--update-persona` was not given (nothing is written then)."""
    mode, wanted = assistant.mode, choice.texts()
    if not isinstance(mode, TieredMode) or not wanted:
        return None
    engine, agent = assistant.engine, agent_of(chat)
    core = engine.tiers.core
    places = mode.places(engine, user, agent)
    in_view = {b.label: b.value for b in await mode.core_blocks(engine, user, agent)}
    started = (await assistant.memory_of(user, chat)).turn_count > 0
    changes, refused = {}, []
    for label, text in wanted.items():
        if label not in places:
            return f"this agent has no core memory block {label!r} to set with --{label}"
        if in_view.get(label) == text:
            continue
        own = any(b.label == label for b in await core.list(places[label].scope))
        if (own or started) and label in choice.seeds and not choice.update:
            continue  # the settings seed new agents; an existing one keeps its own
        if (own or started) and not choice.update:
            refused.append(label)
        changes[label] = text
    if refused:
        flags = " and ".join(f"--{label}" for label in refused)
        return (
            f"agent {engine.speaker!r} of user {user!r} already has a {' and a '.join(refused)} that "
            f"differs from {flags}: add --update-persona to replace it"
        )
    for label, text in changes.items():

        async def write(scope: bytes, label: str = label, text: str = text) -> Any:
            return await core.set(scope, label, text)

        await edit_block(core, places, label, write)
    return None
