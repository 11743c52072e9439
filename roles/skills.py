"""Skills: Python functions declared in YAML, or typed with `@tool` (`roles.tools`), offered to the model as
tools.

A failing skill, an unknown skill name or bad arguments become a tool error the model sees, never a crash.
"""

from __future__ import annotations

import importlib
import inspect
import json
import logging
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from brain.errors import ConfigError
from brain.jsontext import model_json, without_surrogates
from brain.llm.protocol import ToolCall, ToolSpec

__all__ = ["NAME_PATTERN", "Skill", "SkillDeclaration", "SkillSource", "Skills", "check_arguments"]

NAME_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
_log = logging.getLogger("brain.skills")
_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "array": list,
    "object": dict,
}


class SkillDeclaration(BaseModel):
    """One skill as written in YAML."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=NAME_PATTERN)
    description: str
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    entry: str = Field(pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$", description="module:function")


class Skill(BaseModel):
    """A declaration and its function. `arguments`: the pydantic model a call's arguments are validated with
    (a `@tool`'s); None: they are checked against the declared schema's top level (`check_arguments`)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    declaration: SkillDeclaration
    function: Callable[..., Any]
    arguments: type[BaseModel] | None = None


@runtime_checkable
class SkillSource(Protocol):
    """Something that offers a skill: a function decorated with `@tool`."""

    @property
    def skill(self) -> Skill: ...


def check_arguments(schema: dict[str, Any], arguments: Any) -> str | None:
    """A short complaint when `arguments` do not fit the top level of a JSON-schema object, else None."""
    if not isinstance(arguments, dict):
        return "arguments must be a JSON object"
    properties = schema.get("properties", {})
    missing = [k for k in schema.get("required", []) if k not in arguments]
    if missing:
        return f"missing required argument(s): {', '.join(missing)}"
    for key, value in arguments.items():
        if key not in properties:
            if schema.get("additionalProperties", True) is False:
                return f"unknown argument {key!r}"
            continue
        expected = properties[key].get("type")
        python_type = _TYPES.get(expected) if isinstance(expected, str) else None
        if python_type is not None and (
            not isinstance(value, python_type)
            or (expected in {"integer", "number"} and isinstance(value, bool))
        ):
            return f"argument {key!r} must be of type {expected}"
    return None


def _validated(model: type[BaseModel], arguments: Any) -> dict[str, Any] | str:
    """The keyword arguments `arguments` validate to with `model` (those given, named by their aliases), or a
    short complaint naming the bad arguments (never their values)."""
    if not isinstance(arguments, dict):
        return "arguments must be a JSON object"
    try:
        valid = model.model_validate(arguments)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        complaints = [f"argument {'.'.join(map(str, e['loc']))!r}: {e['msg']}" for e in errors[:5]]
        return "; ".join(complaints) + (f" (and {len(errors) - 5} more)" if len(errors) > 5 else "")
    fields = type(valid).model_fields
    return {fields[k].alias or k: getattr(valid, k) for k in fields if k in valid.model_fields_set}


class Skills:
    """The skills of one role, resolved once: from declarations (`load`), or given as `Skill`s and `@tool`
    functions (`Skills([get_weather, book_table])`)."""

    def __init__(self, skills: Sequence[Skill | SkillSource] = ()) -> None:
        resolved = [s.skill if isinstance(s, SkillSource) else s for s in skills]
        self._skills = {s.declaration.name: s for s in resolved}

    @classmethod
    def load(cls, declarations: Sequence[SkillDeclaration], where: str = "skills") -> Skills:
        """Import each entry point; `ConfigError` naming the skill when one cannot be found. An entry that is
        a `@tool` keeps the declaration given here and has its arguments validated by the tool's model."""
        skills = []
        for i, declaration in enumerate(declarations):
            module_name, function_name = declaration.entry.split(":")
            try:
                function = getattr(importlib.import_module(module_name), function_name)
            except (ImportError, AttributeError) as exc:
                raise ConfigError(
                    f"{where}[{i}].entry: cannot import {declaration.entry!r} "
                    f"for skill {declaration.name!r}: {exc}"
                ) from exc
            if not callable(function):
                raise ConfigError(f"{where}[{i}].entry: {declaration.entry!r} is not callable")
            if isinstance(function, SkillSource):
                skills.append(function.skill.model_copy(update={"declaration": declaration}))
            else:
                skills.append(Skill(declaration=declaration, function=function))
        return cls(skills)

    @property
    def declarations(self) -> tuple[SkillDeclaration, ...]:
        return tuple(s.declaration for s in self._skills.values())

    @property
    def specs(self) -> list[ToolSpec]:
        return [
            ToolSpec(
                name=s.declaration.name,
                description=s.declaration.description,
                parameters=s.declaration.parameters,
            )
            for s in self._skills.values()
        ]

    def __bool__(self) -> bool:
        return bool(self._skills)

    async def invoke(self, call: ToolCall) -> str:
        """Run the skill a tool call names; any problem is returned as `error: ...` for the model."""
        skill = self._skills.get(call.name)
        if skill is None:
            available = ", ".join(self._skills) or "none"
            return f"error: there is no skill named {call.name!r}; available: {available}"
        try:
            arguments = json.loads(call.arguments or "{}")
        except ValueError:
            return f"error: the arguments of {call.name} are not valid JSON"
        if skill.arguments is not None:
            valid = _validated(skill.arguments, arguments)
            if isinstance(valid, str):
                return f"error: {call.name}: {valid}"
            arguments = valid
        elif (complaint := check_arguments(skill.declaration.parameters, arguments)) is not None:
            return f"error: {call.name}: {complaint}"
        try:
            result = skill.function(**arguments)
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:  # a skill's failure is the model's to handle, not the turn's
            _log.warning("skill %s failed: %s: %s", call.name, type(exc).__name__, exc)
            return f"error: {call.name} failed: {type(exc).__name__}: {exc}"
        return without_surrogates(result) if isinstance(result, str) else model_json(result, default=str)
