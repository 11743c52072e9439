"""`brain.client.AsyncBrainClient` against the served app (uvicorn on a loopback socket, real Redis, a
scripted model): every route of the API through the client, answers typed, times in UTC, and each kind of
refusal as its own error."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime

import httpx2
import pytest
from pydantic import SecretStr

from brain.client import (
    ApiAuthError,
    ApiConflictError,
    ApiConnectionError,
    ApiInputError,
    ApiNotFoundError,
    ApiRateLimitError,
    ApiServerError,
    ApiTooLargeError,
    AsyncBrainClient,
    ChatEvent,
)
from brain.errors import LLMError, NotFoundError
from brain.wire import ChatReply, Me, NewMessage
from tests.roles.service.conftest import Served


class Recording(httpx2.AsyncBaseTransport):
    """A real HTTP transport that notes each request's method and raw path."""

    def __init__(self) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.seen: list[tuple[str, str]] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self.seen.append((request.method, request.url.raw_path.decode().partition("?")[0]))
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _operations(schema: dict[str, object]) -> set[tuple[str, str]]:
    paths = schema["paths"]
    assert isinstance(paths, dict)
    return {(method.upper(), path) for path, operations in paths.items() for method in operations}


def _matched(seen: list[tuple[str, str]], operations: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """The operations the requests seen reached (a path's {placeholders}: one escaped segment)."""
    patterns = {op: re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", op[1]) + "$") for op in operations}
    return {
        op
        for method, path in seen
        for op, pattern in patterns.items()
        if op[0] == method and pattern.match(path)
    }


def _recent(moment: datetime) -> bool:
    return moment.tzinfo is UTC and abs(moment.timestamp() - time.time()) < 120


async def test_every_route_answers_through_the_client_typed_and_in_utc(served: Served) -> None:
    served.llm.add("Hello Ann.")
    served.llm.add("Lisbon, by the sea.")
    recording = Recording()
    async with httpx2.AsyncClient(base_url=served.url) as plain:
        operations = _operations((await plain.get("/openapi.json")).json())
    async with AsyncBrainClient(served.url, SecretStr(await served.key("ann")), transport=recording) as ann:
        assert (await ann.health()).status == "ok" and (await ann.ready()).status == "ready"
        assert await ann.me() == Me(user="ann", agent=None)
        assert await ann.chat("Hi, I am Ann", chat_id="c1") == ChatReply(chat_id="c1", text="Hello Ann.")
        events = [e async for e in ann.chat_stream("Where do I live?", chat_id="c1")]
        assert {e.kind for e in events[:-1]} == {"delta"}
        assert "".join(e.text for e in events[:-1]) == "Lisbon, by the sea."
        assert events[-1] == ChatEvent(kind="done", text="Lisbon, by the sea.", chat_id="c1")

        added = await ann.add_memory("Ann lives in Lisbon", infer=False)
        fact = added.fact
        assert fact is not None and fact.text == "Ann lives in Lisbon" and _recent(fact.created_at)
        queued = await ann.add_memory(messages=[NewMessage(content="I adopted a cat")], chat_id="pets")
        assert (queued.chat_id, queued.turns, queued.queued, queued.fact) == ("pets", 1, True, None)
        assert [f.id for f in await ann.memories()] == [fact.id]
        assert [f.id for f in await ann.search("Lisbon")] == [fact.id]
        assert await ann.memory(fact.id) == fact
        retired = await ann.delete_memory(fact.id, reason="moved")
        assert retired.expired_at is not None and retired.expired_at >= fact.created_at
        between = fact.created_at + (retired.expired_at - fact.created_at) / 2
        assert await ann.memories() == [] and await ann.memories(as_of=between) == [retired]  # true then
        changes = await ann.memory_history(fact.id)
        assert [e.event for e in changes] == ["ADD", "DELETE"] and changes[1].reason == "moved"
        assert all(_recent(e.at) for e in changes)
        assert (await ann.rollback(changes[1].id)).event == "DELETE"
        assert [e.event for e in await ann.history()][-1] == "ROLLBACK"

        assert sorted(c.id for c in await ann.chats()) == ["c1", "pets"]
        view = await ann.get_chat("c1", last=10)
        assert [t.content for t in view.turns] == [
            "Hi, I am Ann",
            "Hello Ann.",
            "Where do I live?",
            "Lisbon, by the sea.",
        ]
        assert all(_recent(t.at) for t in view.turns)
        export = await ann.export_chat("c1")
        odd = "trip copy? #2 ü%"  # every character a path needs escaped
        assert (await ann.import_chat(odd, export)).turns == 4
        assert [t.content for t in (await ann.get_chat(odd)).turns] == [t.content for t in view.turns]
        assert (await ann.erase_chat(odd)).chats == 1

        labels = [b.label for b in await ann.core_blocks()]
        assert "persona" in labels
        assert (
            await ann.edit_core_block("persona", "I am a patient gardener.")
        ).value == "I am a patient gardener."
        passage = await ann.archival_insert("安把护照放在蓝色抽屉里", tags=["travel"])
        assert _recent(passage.at) and passage.tags == ("travel",)
        assert [p.id for p in await ann.archival_list(tags=["travel"])] == [passage.id]
        assert [p.id for p in await ann.archival_search("护照")] == [passage.id]
        assert (await ann.archival_delete(passage.id)).id == passage.id

        usage = await ann.usage()
        assert usage.calls == 2 and [r.chat_id for r in usage.rows] == ["c1"]
        graph = await ann.graph()
        assert graph.entities == () and graph.relations == ()
        assert await ann.dead_letters() == []
        stats = await ann.stats()
        assert stats.keys > 0 and stats.bytes > 0
        erased = await ann.erase_memory(confirm=True)
        assert erased.api_keys == 1
        with pytest.raises(ApiAuthError):  # its own key went with the user
            await ann.me()
    covered = _matched(recording.seen, operations)
    assert len(operations) == 28
    assert covered == operations, sorted(operations - covered)


async def test_each_refusal_is_its_own_error(served: Served) -> None:
    served.llm.add(LLMError("gpt-x failed at http://10.0.0.7:8000"))
    async with AsyncBrainClient(served.url) as anonymous:
        with pytest.raises(ApiAuthError) as unauthorized:
            await anonymous.me()
    assert unauthorized.value.status == 401 and isinstance(
        unauthorized.value.__cause__, httpx2.HTTPStatusError
    )
    async with (
        AsyncBrainClient(served.url, await served.key("ann")) as ann,
        AsyncBrainClient(served.url, await served.key("ann", agent="coder")) as coder,
    ):
        with pytest.raises(ApiNotFoundError) as missing:
            await ann.memory("no-such-fact")
        assert isinstance(missing.value, NotFoundError) and missing.value.status == 404
        with pytest.raises(ApiInputError) as invalid:
            await ann.search("tea", limit=0)  # the server's check, not the client's
        assert invalid.value.status == 422 and invalid.value.detail[0]["loc"] == ["query", "limit"]
        with pytest.raises(ApiInputError) as unconfirmed:
            await ann.erase_memory(confirm=False)
        assert unconfirmed.value.status == 400 and "confirm=true" in str(unconfirmed.value)
        with pytest.raises(ApiAuthError) as forbidden:
            await coder.stats()
        assert forbidden.value.status == 403
        await ann.add_memory(messages=[NewMessage(content="hello")], chat_id="full")
        export = await ann.export_chat("full")
        with pytest.raises(ApiConflictError) as conflict:
            await ann.import_chat("full", export)
        assert conflict.value.status == 409
        with pytest.raises(ApiServerError) as failed:
            await ann.chat("Hi", chat_id="c1")
        assert failed.value.status == 502 and failed.value.request_id
        assert "10.0.0.7" not in str(failed.value)
        assert await ann.me() == Me(user="ann", agent=None)  # the client goes on after each


async def test_no_answer_is_a_connection_error() -> None:
    async with AsyncBrainClient("http://127.0.0.1:9", "bk_x", timeout=2) as nowhere:  # nobody listens
        with pytest.raises(ApiConnectionError) as raised:
            await nowhere.health()
    assert isinstance(raised.value.__cause__, httpx2.HTTPError)


@pytest.mark.serve(max_body_bytes=2_000)
async def test_a_body_over_the_limit_is_too_large(served: Served) -> None:
    async with AsyncBrainClient(served.url, await served.key("ann")) as ann:
        with pytest.raises(ApiTooLargeError) as raised:
            await ann.add_memory("x" * 3_000, infer=False)
    assert raised.value.status == 413


@pytest.mark.serve(rate_limit=2, rate_window_seconds=60)
async def test_the_rate_limit_says_when_to_try_again(served: Served) -> None:
    async with AsyncBrainClient(served.url, await served.key("ann")) as ann:
        await ann.me()
        await ann.me()
        with pytest.raises(ApiRateLimitError) as raised:
            await ann.me()
    assert raised.value.status == 429 and raised.value.retry_after is not None
    assert 0 < raised.value.retry_after <= 60
