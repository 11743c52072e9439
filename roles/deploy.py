"""YAML deployments: settings sections (llm, llms, redis, memory, log) plus `roles` and a `pipeline`.

`load_deployment` validates everything, naming the file and the dotted key of each problem; `Deployment.plan`
describes what would run; `run_deployment` builds the team (owning its clients) and runs the pipeline.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from actions.prompt import PromptAction
from brain.errors import ConfigError
from brain.loader import config_error, load_settings_traced, read_config_file
from brain.runtime import open_runtime
from brain.settings import Settings, mask_url
from roles.assistant import Assistant
from roles.environment import Team, TeamResult
from roles.role import USER_REQUIREMENT, Role
from roles.skills import SkillDeclaration, Skills

__all__ = ["ActionSpec", "Deployment", "PipelineSpec", "RoleSpec", "load_deployment", "run_deployment"]

_STRICT = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class ActionSpec(BaseModel):
    model_config = _STRICT

    name: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
    instruction: str = Field(min_length=1)


class RoleSpec(BaseModel):
    model_config = _STRICT

    name: str = Field(min_length=1, max_length=64)
    kind: str = Field("role", alias="class", description="assistant, role, or module:Class")
    profile: str = ""
    goal: str = ""
    constraints: str = ""
    desc: str = ""
    language: str = "English"
    llm: str = "default"
    skills: tuple[SkillDeclaration, ...] = ()
    watch: tuple[str, ...] = (USER_REQUIREMENT,)
    actions: tuple[ActionSpec, ...] = ()
    react_mode: Literal["react", "by_order"] = "by_order"


class PipelineSpec(BaseModel):
    model_config = _STRICT

    idea: str = Field(min_length=1)
    n_round: int = Field(5, ge=1, le=1_000)
    budget_tokens: int | None = Field(None, gt=0)
    send_to: tuple[str, ...] = ()


class Deployment(BaseModel):
    model_config = _STRICT

    roles: tuple[RoleSpec, ...] = Field(min_length=1)
    pipeline: PipelineSpec | None = None

    def plan(self, settings: Settings, file: Path) -> list[str]:
        """What `brain run` would do, one line each; no secrets. Pure."""
        lines = [f"deployment {file}", f"redis: {settings.redis.masked_url}"]
        for name in sorted({r.llm for r in self.roles}):
            llm = settings.llm if name == "default" else settings.llm_for(name)
            lines.append(
                f"llm {name}: {llm.model} at {mask_url(llm.base_url or 'https://api.openai.com/v1')}"
            )
        for role in self.roles:
            actions = ", ".join(a.name for a in role.actions) or (
                "TalkAction" if role.kind == "assistant" else "-"
            )
            skills = f"; skills: {', '.join(s.name for s in role.skills)}" if role.skills else ""
            lines.append(
                f"role {role.name} ({role.kind}, llm {role.llm}): watches {', '.join(role.watch)}; "
                f"actions: {actions} ({role.react_mode}){skills}"
            )
        if self.pipeline is not None:
            budget = self.pipeline.budget_tokens or "no"
            lines.append(
                f"pipeline: {self.pipeline.n_round} rounds at most, {budget} token budget; "
                f"first message: {self.pipeline.idea!r}"
            )
        return lines


def load_deployment(path: str | Path, environ: Mapping[str, str]) -> tuple[Settings, Deployment]:
    """Settings and deployment from one YAML file; every error names the file and the dotted key."""
    file = Path(path)
    settings, _ = load_settings_traced(file, environ, other_sections=("roles", "pipeline"))
    data = read_config_file(file, environ)
    try:
        deployment = Deployment.model_validate({k: data[k] for k in ("roles", "pipeline") if k in data})
    except ValidationError as exc:
        raise config_error(exc, file, {}, model=Deployment) from None
    names = [r.name for r in deployment.roles]
    for i, role in enumerate(deployment.roles):
        if role.name in names[:i]:
            raise ConfigError(f"{file}: roles.{i}.name: two roles are named {role.name!r}")
        if role.llm != "default" and role.llm not in settings.llms:
            raise ConfigError(f"{file}: roles.{i}.llm: no LLM named {role.llm!r}; define it under llms:")
        if role.kind == "role" and not role.actions:
            raise ConfigError(f"{file}: roles.{i}.actions: a plain role needs at least one action")
        if role.kind not in {"role", "assistant"}:
            _role_class(role.kind, f"{file}: roles.{i}.class")  # imported and checked now, even for --dry-run
        Skills.load(role.skills, where=f"{file}: roles.{i}.skills")
    return settings, deployment


def _role_class(kind: str, where: str) -> type[Role]:
    """The Role subclass `module:Class` names; `ConfigError` at `where` when it does not import or is not
    one that a deployment can build from an LLM and actions."""
    module, colon, name = kind.partition(":")
    if not colon or not module or not name.isidentifier():
        raise ConfigError(f"{where}: {kind!r}: write assistant, role, or module:Class")
    try:
        cls = getattr(importlib.import_module(module), name)
    except ImportError as exc:
        raise ConfigError(f"{where}: cannot import {kind!r}: {type(exc).__name__}: {exc}") from None
    except AttributeError:
        raise ConfigError(f"{where}: cannot import {kind!r}: module {module!r} has no {name!r}") from None
    except Exception as exc:  # the module itself failed while importing
        raise ConfigError(f"{where}: importing {module!r} failed: {type(exc).__name__}: {exc}") from None
    if not (isinstance(cls, type) and issubclass(cls, Role)):
        what = f"a {type(cls).__name__}" if not isinstance(cls, type) else f"class {cls.__name__}"
        raise ConfigError(f"{where}: {kind!r} is {what}, not a subclass of roles.Role")
    if issubclass(cls, Assistant):
        raise ConfigError(
            f"{where}: {kind!r} is an assistant, which needs memory: write class: assistant "
            f"(memory.mode picks its kind)"
        )
    return cls


async def run_deployment(settings: Settings, deployment: Deployment, file: Path) -> TeamResult:
    """Build the roles on one runtime (one client per named LLM, Redis when an assistant needs memory)
    and run the pipeline."""
    if deployment.pipeline is None:
        raise ConfigError(f"{file}: pipeline: nothing to run; add pipeline: {{idea: ..., n_round: ...}}")
    with_redis = any(r.kind == "assistant" for r in deployment.roles)
    async with open_runtime(settings, redis=with_redis) as runtime:
        roles: list[Role] = []
        for i, spec in enumerate(deployment.roles):
            persona: dict[str, Any] = {
                "name": spec.name,
                "profile": spec.profile,
                "goal": spec.goal,
                "constraints": spec.constraints,
                "desc": spec.desc,
                "language": spec.language,
                "watch": spec.watch,
            }
            llm = runtime.llm_named(spec.llm)
            if spec.kind == "assistant":
                role_runtime = runtime if llm is runtime.llm else replace(runtime, llm=llm)
                roles.append(
                    Assistant.for_runtime(
                        role_runtime,
                        chat_id=f"deploy-{file.stem}",
                        skills=Skills.load(spec.skills),
                        **persona,
                    )
                )
                continue
            cls = Role if spec.kind == "role" else _role_class(spec.kind, f"{file}: roles.{i}.class")
            actions = [PromptAction(a.name, a.instruction) for a in spec.actions]
            roles.append(cls(llm=llm, actions=actions, react_mode=spec.react_mode, **persona))
        team = Team(budget_tokens=deployment.pipeline.budget_tokens)
        team.hire(roles)
        return await team.run(
            deployment.pipeline.idea, deployment.pipeline.n_round, deployment.pipeline.send_to
        )
