"""The client covers the API: a builder (`brain.client.routes`) for every operation of the app's schema,
and a method of that name, with the same arguments, on both clients. A new route without them fails here;
so does a new route hidden from the schema, unless it is named below."""

from __future__ import annotations

import inspect
from typing import Any

from brain.client import AsyncBrainClient, BrainClient, routes
from brain.client.call import ROUTES
from brain.settings import Settings
from roles.http import create_app

HIDDEN = {"/mcp", "/ui", "/docs", "/redoc", "/docs/assets/{name}", "/openapi.json"}
"""Routes outside the schema, none of them the client's: MCP (an MCP client's), the inspector page, the
API's documentation and schema."""


def _operations() -> set[tuple[str, str]]:
    schema = create_app(Settings()).openapi()
    return {(method.upper(), path) for path, operations in schema["paths"].items() for method in operations}


def test_every_operation_of_the_schema_has_a_builder_and_no_builder_is_left_over() -> None:
    operations = _operations()
    built = set(ROUTES.values())
    assert operations - built == set(), "a route without a brain.client.routes builder"
    assert built - operations == set(), "a builder for a route the app does not have"
    assert len(built) == len(ROUTES) == 28


def test_every_route_of_the_app_is_in_the_schema_or_named_as_hidden() -> None:
    app = create_app(Settings())
    schema_paths = {path for _, path in _operations()}
    assert _paths(app.routes) - schema_paths == HIDDEN


def _paths(routes: list[Any], prefix: str = "") -> set[str]:
    """The paths of `routes`, those of included routers too (FastAPI keeps them as their router)."""
    paths: set[str] = set()
    for route in routes:
        included = getattr(route, "original_router", None)
        if included is not None:
            paths |= _paths(included.routes)  # the router's routes carry its prefix
        else:
            paths.add(prefix + route.path)
    assert paths
    return paths


def test_both_clients_have_each_builders_method_with_its_arguments() -> None:
    for name in ROUTES:
        built = inspect.signature(getattr(routes, name)).parameters
        wanted = [(p.name, p.kind, p.default) for p in built.values() if p.name != "stream"]
        for client in (AsyncBrainClient, BrainClient):
            method = getattr(client, name, None)
            assert method is not None, f"{client.__name__} has no {name}()"
            given = list(inspect.signature(method).parameters.values())[1:]
            assert [(p.name, p.kind, p.default) for p in given] == wanted, f"{client.__name__}.{name}"
        assert inspect.iscoroutinefunction(getattr(AsyncBrainClient, name))
        assert not inspect.iscoroutinefunction(getattr(BrainClient, name))
    assert inspect.isasyncgenfunction(AsyncBrainClient.chat_stream)
    assert inspect.isgeneratorfunction(BrainClient.chat_stream)
