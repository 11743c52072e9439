"""A request to the HTTP API as a value (`Call`): its method, path, query, body and the type of its answer;
`decode` reads the answer. The builders of every route are `brain.client.routes`; `ROUTES` names each
one's route (a test holds it to the app's routes: a new route without a builder fails it). Pure."""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import date, datetime
from typing import Any, Generic, Literal, TypeVar
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from brain.client.errors import ApiInputError

__all__ = ["ROUTES", "Call", "Moment", "call", "decode", "json_body", "route"]

T = TypeVar("T")
Moment = str | date | datetime
"""An "as of" moment: an ISO date or time, a `date` (its end) or a `datetime` (without a zone: UTC)."""


class Call(BaseModel, Generic[T]):
    """One request to make, answered with a `T`: `route` is the path as the API declares it, `path` with
    its values in; `answer` is `T` at run time."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    method: Literal["GET", "POST", "PUT", "DELETE"]
    route: str
    path: str
    params: tuple[tuple[str, str], ...] = ()
    body: Any = None
    answer: Any = None
    also_ok: tuple[int, ...] = ()  # statuses besides 2xx whose body is the answer (`ready`: 503)
    stream: bool = False


ROUTES: dict[str, tuple[str, str]] = {}
"""Builder name -> (method, route) for every route of the API."""

_Built = TypeVar("_Built", bound=Callable[..., "Call[Any]"])


def route(method: str, route: str) -> Callable[[_Built], _Built]:
    def register(build: _Built) -> _Built:
        ROUTES[build.__name__] = (method, route)
        return build

    return register


def call(name: str, answer: Any, *ids: str, params: dict[str, Any] | None = None, **rest: Any) -> Call[Any]:
    method, route = ROUTES[name]
    path = route
    for value in ids:  # the route's {placeholders}, in order
        start, end = path.index("{"), path.index("}")
        path = path[:start] + quote(value, safe="") + path[end + 1 :]
    return Call(method=method, route=route, path=path, params=_query(params or {}), answer=answer, **rest)


def _query(params: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    pairs: list[tuple[str, str]] = []
    for name, value in params.items():
        values = value if isinstance(value, list | tuple) else [value]
        pairs += [(name, _text(v)) for v in values if v is not None]
    return tuple(pairs)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, date | datetime):
        return value.isoformat()
    return str(value)


def json_body(model: type[BaseModel], **fields: Any) -> Any:
    """The JSON of a request body, validated here first: `ApiInputError` (no request sent) when unusable."""
    try:
        return model(**fields).model_dump(mode="json", exclude_unset=True)
    except ValidationError as exc:
        errors = [{"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]} for e in exc.errors()]
        raise ApiInputError(f"invalid {model.__name__}: {exc}", detail=errors) from exc


@functools.cache
def _adapter(answer: Any) -> TypeAdapter[Any]:
    return TypeAdapter(answer)


def decode(call: Call[T], content: bytes) -> T:
    """The answer to `call` from its body. Pure."""
    answer: T = _adapter(call.answer).validate_json(content)
    return answer
