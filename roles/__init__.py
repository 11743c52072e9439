"""Roles: Role, the turn engine and its memory modes, Assistant (the engine as a Role), Environment and Team,
deployments, and the `brain` command line."""

from roles.assistant import Assistant
from roles.blocks import BlocksAssistant
from roles.engine import TurnEngine
from roles.environment import Environment, Team, TeamResult
from roles.modes import MODES, BlocksMode, BrainMode, TieredMode, mode_for
from roles.role import Role
from roles.skills import SkillDeclaration, Skills
from roles.tiered import TieredAssistant
from roles.tools import Tool, tool

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
