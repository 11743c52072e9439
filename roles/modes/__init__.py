"""Memory modes: strategies of the turn engine, chosen by `memory.mode` from one table (`MODES`), not by
importing a class. `brain` (MetaGPT's brain memory), `tiered` (MemGPT's tiers and tools), `blocks`
(LlamaIndex-style budgeted blocks)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from brain.errors import ConfigError
from brain.runtime import Runtime
from roles.modes.blocks import BlocksMode
from roles.modes.brain import BrainMode
from roles.modes.tiered import TieredMode

__all__ = ["MODES", "BlocksMode", "BrainMode", "TieredMode", "mode_for"]

MODES: dict[str, Callable[..., BrainMode]] = {
    "brain": lambda runtime: BrainMode(),
    "tiered": lambda runtime, **options: TieredMode(**options),
    "blocks": lambda runtime: BlocksMode(runtime),
}
"""Each `memory.mode` and how its strategy is built from the runtime (and the mode's own options)."""


def mode_for(runtime: Runtime, **options: Any) -> BrainMode:
    """The strategy `runtime.settings.memory.mode` names, checked against the runtime (`ConfigError`)."""
    name = runtime.settings.memory.mode
    if name not in MODES:
        raise ConfigError(f"memory.mode {name!r}: one of {', '.join(MODES)}")
    mode = MODES[name](runtime, **options)
    mode.check(runtime)
    return mode
