"""Roles: Role, Assistant (and its modes), Environment and Team, deployments, and the `brain` command line.
Importing the package registers every memory mode's assistant class."""

from roles.assistant import Assistant
from roles.blocks import BlocksAssistant
from roles.environment import Environment, Team, TeamResult
from roles.role import Role
from roles.skills import SkillDeclaration, Skills
from roles.tiered import TieredAssistant

__all__ = [
    "Assistant",
    "BlocksAssistant",
    "Environment",
    "Role",
    "SkillDeclaration",
    "Skills",
    "Team",
    "TeamResult",
    "TieredAssistant",
]
