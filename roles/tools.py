"""`@tool`: a typed Python function (sync or async) and its docstring as a skill, its JSON schema built by
pydantic from the signature.

    @tool
    def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> str:
        '''The weather now in a city.

        Args:
            city: The city's name, in English.
        '''

The skill's name is the function's (`@tool(name=...)` to choose another), its description the docstring's
first paragraph, each parameter's description its entry in a Google-style `Args:` section. Parameters may be
of any type pydantic validates and describes (str, int, float, bool, lists, Optional, Literal, models...),
with or without defaults. `Skills([get_weather])` offers it to the model: the arguments the model sends are
validated with the same pydantic model before the call (a bad one is a tool error the model sees), an async
function is awaited. Calling the decorated function calls the function itself.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from typing import Any, Generic, ParamSpec, TypeVar, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.json_schema import GenerateJsonSchema

from roles.skills import NAME_PATTERN, Skill, SkillDeclaration

__all__ = ["Tool", "tool"]

P = ParamSpec("P")
R = TypeVar("R")

_KEYWORD = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_ARGS_HEADER = re.compile(r"(Args|Arguments|Parameters):")
_ARG = re.compile(r"\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)")


class _NoTitles(GenerateJsonSchema):
    """Pydantic's JSON schema without the titles it makes up from field names (noise in a model's prompt)."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


class Tool(Generic[P, R]):
    """A function decorated with `@tool`: calling it calls the function; `skill` is what `Skills` offers."""

    __name__: str
    __wrapped__: Callable[P, R]

    def __init__(self, function: Callable[P, R], skill: Skill) -> None:
        functools.update_wrapper(self, function)
        self._skill = skill

    @property
    def skill(self) -> Skill:
        return self._skill

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.__wrapped__(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<tool {self._skill.declaration.name}>"


@overload
def tool(function: Callable[P, R], /) -> Tool[P, R]: ...


@overload
def tool(*, name: str | None = None) -> Callable[[Callable[P, R]], Tool[P, R]]: ...


def tool(
    function: Callable[P, R] | None = None, /, *, name: str | None = None
) -> Tool[P, R] | Callable[[Callable[P, R]], Tool[P, R]]:
    """`@tool` or `@tool(name=...)`: the function as a skill. `TypeError` for what cannot be one (not a
    function, a parameter not passable by keyword, a type pydantic has no schema for); `ValueError` for a
    name outside `NAME_PATTERN`."""

    def decorate(function: Callable[P, R]) -> Tool[P, R]:
        return Tool(function, _skill_of(function, name))

    return decorate if function is None else decorate(function)


def _skill_of(function: Callable[..., Any], name: str | None = None) -> Skill:
    """A typed function's skill: schema and argument model from its signature, texts from its docstring."""
    if not inspect.isfunction(function):
        raise TypeError(f"@tool takes a function (def or async def), not {type(function).__name__}")
    name = function.__name__ if name is None else name
    if not re.fullmatch(NAME_PATTERN, name):
        raise ValueError(f"@tool: {name!r} is not a skill name (1 to 64 letters, digits, '_' or '-')")
    try:
        hints = get_type_hints(function, include_extras=True)
    except NameError as exc:
        raise TypeError(f"@tool {name}: an annotation cannot be resolved: {exc}") from exc
    description, documented = _docstring(inspect.getdoc(function))
    fields: dict[str, Any] = {}
    for i, parameter in enumerate(inspect.signature(function).parameters.values()):
        if parameter.kind not in _KEYWORD:
            raise TypeError(f"@tool {name}: parameter {parameter.name!r} cannot be passed by keyword")
        default = ... if parameter.default is inspect.Parameter.empty else parameter.default
        described: dict[str, Any] = (
            {"description": documented[parameter.name]} if parameter.name in documented else {}
        )
        info = Field(default, alias=parameter.name, **described)
        fields[f"p{i}"] = (hints.get(parameter.name, Any), info)  # aliases: any name, even `json`
    arguments: type[BaseModel] = create_model(
        name, __config__=ConfigDict(extra="forbid", frozen=True), **fields
    )
    schema = arguments.model_json_schema(schema_generator=_NoTitles)
    first: dict[str, Any] = {
        "type": "object",
        **{k: schema[k] for k in ("properties", "required") if k in schema},
    }
    parameters = first | {k: v for k, v in schema.items() if k not in {*first, "title"}}
    declaration = SkillDeclaration(
        name=name,
        description=description,
        parameters=parameters,
        entry=f"{function.__module__}:{function.__name__}",
    )
    return Skill(declaration=declaration, function=function, arguments=arguments)


def _docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """(the first paragraph, its lines joined by spaces; each parameter's description in a Google-style
    `Args:` section). `doc` is cleaned as `inspect.getdoc` cleans it."""
    lines = (doc or "").splitlines()
    summary: list[str] = []
    for line in lines:
        if not line.strip() or _ARGS_HEADER.fullmatch(line.strip()):
            break
        summary.append(line.strip())
    described: dict[str, list[str]] = {}
    header = next((i for i, line in enumerate(lines) if _ARGS_HEADER.fullmatch(line.strip())), None)
    if header is not None:
        outer, inner, current = _indent(lines[header]), None, None
        for line in lines[header + 1 :]:
            if not line.strip():
                continue
            if _indent(line) <= outer:
                break
            inner = _indent(line) if inner is None else inner
            entry = _ARG.fullmatch(line.strip()) if _indent(line) == inner else None
            if entry is not None:
                current = described.setdefault(entry.group(1), [])
                current.append(entry.group(2))
            elif current is not None:
                current.append(line.strip())
    return " ".join(summary), {k: " ".join(t for t in v if t) for k, v in described.items()}


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())
