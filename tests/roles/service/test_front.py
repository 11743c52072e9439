"""`roles.http.front`: the streamed chat goes through the layers that act on it and no others; what it
does not serve, and every request of an app with telemetry on, goes through FastAPI's whole stack; a
failure before the stream is answered as the whole stack answers it."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest

from brain.backends.redis import RedisBackend
from brain.backends.redis.api_keys import RedisApiKeyStore
from brain.backends.redis.client import TranslatingRedis
from brain.errors import StoreError
from brain.llm.scripted import ScriptedLLM
from brain.runtime import local_runtime
from brain.settings import Settings
from roles.http import chat_stream, create_app, routes
from roles.http.front import BrainAPI
from tests.roles.service.conftest import settings_for
from tests.support.lean_pair import exchange, parsed, request, serve_pair
from tests.support.serving import assistant_of, serving


@contextlib.asynccontextmanager
async def _served(
    settings: Settings, llm: ScriptedLLM, redis_url: str
) -> AsyncIterator[tuple[str, BrainAPI]]:
    client = TranslatingRedis.from_url(redis_url)
    await client.flushdb()
    runtime = local_runtime(llm, settings=settings, backend=RedisBackend.for_settings(client, settings))
    app = create_app(settings, assistant_of(runtime))
    async with serving(app, settings.serve) as url:
        yield url, app, RedisApiKeyStore(client, prefix="svc")
    await client.aclose()


def _stacked(app: BrainAPI) -> list[str]:
    """The paths of the requests that go through the app's whole middleware stack from now on."""
    assert app.middleware_stack is not None  # built when the app started
    seen: list[str] = []
    stack = app.middleware_stack

    async def counted(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope["path"])
        await stack(scope, receive, send)

    app.middleware_stack = counted
    return seen


@pytest.mark.parametrize("telemetry", [False, True])
async def test_the_streamed_chat_skips_the_stack_unless_telemetry_is_on(
    redis_server_url: str, telemetry: bool
) -> None:
    settings = settings_for().model_copy(
        update={"telemetry": settings_for().telemetry.model_copy(update={"enabled": telemetry})}
    )
    llm = ScriptedLLM()
    async with _served(settings, llm, redis_server_url) as (url, app, keys):
        _, secret = await keys.create("ann")
        stacked = _stacked(app)
        llm.add("Streamed.")
        llm.add("Whole.")
        async with httpx2.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {secret}"}) as http:
            streamed = await http.post("/v1/chat", json={"chat_id": "c", "text": "Hi"})
            whole = await http.post("/v1/chat", json={"chat_id": "c", "text": "Hi", "stream": False})
            listed = await http.get("/v1/chats")
    assert streamed.text.endswith('"text": "Streamed."}\n\n') and whole.json()["text"] == "Whole."
    assert listed.status_code == 200
    # not streamed: LeanChat hands it on through the whole stack, as every other request goes
    assert stacked == ["/v1/chat"] * (2 if telemetry else 1) + ["/v1/chats"]
    llm.assert_consumed()


@pytest.mark.parametrize(
    ("failure", "status"),
    [(RuntimeError("boom"), 500), (KeyError("odd"), 500), (StoreError("Redis is down"), 503)],
)
async def test_a_failure_before_the_stream_is_answered_as_the_whole_stack_answers_it(
    redis_server_url: str, monkeypatch: pytest.MonkeyPatch, failure: Exception, status: int
) -> None:
    async def failing(*args: Any) -> Any:
        raise failure

    monkeypatch.setattr(chat_stream, "turn_events", failing)  # the lean route's
    monkeypatch.setattr(routes, "turn_events", failing)  # the FastAPI route's
    async with serve_pair(redis_server_url, ScriptedLLM(), monkeypatch) as pair:
        body = {"chat_id": "c", "text": "Hi"}
        lean = parsed(await exchange(pair.lean, request(body, await pair.key("ann"))))
        plain = parsed(await exchange(pair.plain, request(body, await pair.key("bob"))))
    assert lean == plain
    assert lean.status == status and lean.json()["detail"]
    assert pair.served == []  # it failed before anything streamed
