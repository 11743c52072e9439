"""Roles: Role, Assistant, Environment and Team, deployments, and the `brain` command line."""

from roles.assistant import Assistant
from roles.environment import Environment, Team, TeamResult
from roles.role import Role
from roles.skills import SkillDeclaration, Skills

__all__ = ["Assistant", "Environment", "Role", "SkillDeclaration", "Skills", "Team", "TeamResult"]
