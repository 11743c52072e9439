"""Roles: Role, the turn engine and its memory modes, Assistant (the engine as a Role), Environment and Team,
deployments, and the `brain` command line. The public names below are imported on first use
(`brain.lazy`), so the command line starts without loading them."""

from typing import TYPE_CHECKING

from brain.lazy import lazy_exports

if TYPE_CHECKING:
    from roles.assistant import Assistant
    from roles.blocks import BlocksAssistant
    from roles.engine import TurnEngine
    from roles.environment import Environment, Team, TeamResult
    from roles.modes import MODES, BlocksMode, BrainMode, TieredMode, mode_for
    from roles.role import Role
    from roles.skills import SkillDeclaration, Skills
    from roles.tiered import TieredAssistant
    from roles.tools import Tool, tool
else:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "roles.assistant": ("Assistant",),
            "roles.blocks": ("BlocksAssistant",),
            "roles.engine": ("TurnEngine",),
            "roles.environment": ("Environment", "Team", "TeamResult"),
            "roles.modes": ("MODES", "BlocksMode", "BrainMode", "TieredMode", "mode_for"),
            "roles.role": ("Role",),
            "roles.skills": ("SkillDeclaration", "Skills"),
            "roles.tiered": ("TieredAssistant",),
            "roles.tools": ("Tool", "tool"),
        },
    )

__all__ = [
    "MODES",
    "Assistant",
    "BlocksAssistant",
    "BlocksMode",
    "BrainMode",
    "Environment",
    "Role",
    "SkillDeclaration",
    "Skills",
    "Team",
    "TeamResult",
    "TieredAssistant",
    "TieredMode",
    "Tool",
    "TurnEngine",
    "mode_for",
    "tool",
]
