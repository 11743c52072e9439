"""The client's pure parts: server-sent events read, errors per status, calls built, times in UTC."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from pydantic import TypeAdapter

from brain.client import routes
from brain.client.errors import (
    ApiAuthError,
    ApiConflictError,
    ApiError,
    ApiInputError,
    ApiNotFoundError,
    ApiRateLimitError,
    ApiServerError,
    ApiStreamError,
    ApiTooLargeError,
    api_error,
)
from brain.client.events import ChatEvent, EventReader
from brain.errors import BrainError, InputError, NotFoundError, TooLargeError
from brain.storage.facts import AuditEvent, Fact
from brain.wire import AuditEventView, FactView, UtcTime


def _read(lines: list[str]) -> list[ChatEvent]:
    reader = EventReader()
    events = [e for line in lines if (e := reader.line(line)) is not None]
    last = reader.end()
    return [*events, last] if last is not None else events


def test_events_are_read_as_the_format_has_them() -> None:
    lines = [
        ": a comment",
        "event: delta",
        'data: {"text": "Hel"}',
        "",
        "event: delta\r",
        'data:{"text": "lo\\n"}',
        "",
        "event: something-newer",
        "data: {}",
        "",
        "event: done",
        'data: {"chat_id": "c1",',
        'data:  "text": "Hello\\n"}',
    ]
    assert _read(lines) == [
        ChatEvent(kind="delta", text="Hel"),
        ChatEvent(kind="delta", text="lo\n"),
        ChatEvent(kind="done", text="Hello\n", chat_id="c1"),
    ]


def test_an_error_event_raises_with_what_the_server_said() -> None:
    reader = EventReader()
    assert reader.line("event: error") is None
    assert reader.line('data: {"detail": "the model failed (request ab12)", "request_id": "ab12"}') is None
    with pytest.raises(ApiStreamError) as raised:
        reader.line("")
    assert raised.value.request_id == "ab12" and "the model failed" in str(raised.value)
    assert isinstance(raised.value, ApiServerError)


@pytest.mark.parametrize(
    ("status", "kind", "also"),
    [
        (400, ApiInputError, InputError),
        (401, ApiAuthError, ApiError),
        (403, ApiAuthError, ApiError),
        (404, ApiNotFoundError, NotFoundError),
        (409, ApiConflictError, ApiError),
        (413, ApiTooLargeError, TooLargeError),
        (422, ApiInputError, InputError),
        (429, ApiRateLimitError, ApiError),
        (500, ApiServerError, ApiError),
        (503, ApiServerError, ApiError),
        (418, ApiError, BrainError),
    ],
)
def test_each_status_has_its_error(status: int, kind: type[ApiError], also: type[Exception]) -> None:
    error = api_error(status, b'{"detail": "no"}', {})
    assert type(error) is kind and isinstance(error, also) and isinstance(error, BrainError)
    assert error.status == status and error.detail == "no" and str(error) == f"HTTP {status}: no"


def test_a_rate_limit_says_when_to_retry_and_a_5xx_its_request_id() -> None:
    limited = api_error(429, b'{"detail": "rate limit"}', {"retry-after": "7"})
    assert isinstance(limited, ApiRateLimitError) and limited.retry_after == 7.0
    failed = api_error(502, b'{"detail": "the model failed (request 9f)", "request_id": "9f"}', {})
    assert failed.request_id == "9f"
    fields = [{"loc": ["body", "text"], "msg": "too short", "type": "string_too_short"}]
    invalid = api_error(
        422, b'{"detail": [{"loc": ["body", "text"], "msg": "too short", "type": "string_too_short"}]}', {}
    )
    assert invalid.detail == fields and "too short" in str(invalid)
    assert api_error(502, b"<html>bad gateway</html>", {}).detail == "<html>bad gateway</html>"


def test_calls_put_ids_in_paths_escaped_and_lists_in_repeated_parameters() -> None:
    call = routes.get_chat("a b?#%/ü", last=5)
    assert call.path == "/v1/chats/a%20b%3F%23%25%2F%C3%BC" and call.route == "/v1/chats/{chat_id}"
    assert call.params == (("last", "5"),)
    assert routes.archival_search("护照", tags=["travel", "docs"]).params == (
        ("q", "护照"),
        ("limit", "10"),
        ("tag", "travel"),
        ("tag", "docs"),
    )
    assert routes.memories(include_retired=True).params == (("include_retired", "true"),)
    moment = datetime(2026, 5, 1, 9, 30, tzinfo=UTC)
    assert routes.search("tea", as_of=moment).params[-1] == ("as_of", "2026-05-01T09:30:00+00:00")
    assert routes.graph(as_of=date(2026, 5, 1)).params == (("as_of", "2026-05-01"),)
    assert routes.delete_memory("f1").params == () and routes.delete_memory("f1", reason="moved").params == (
        ("reason", "moved"),
    )


def test_bodies_are_validated_with_the_servers_models_before_anything_is_sent() -> None:
    chat = routes.chat("hi", chat_id="c1", message_id="m1")
    assert chat.body == {
        "text": "hi",
        "chat_id": "c1",
        "stream": False,
        "oversize": "refuse",
        "message_id": "m1",
    }
    with pytest.raises(ApiInputError) as raised:
        routes.chat("", chat_id="c1")
    assert raised.value.status == 0 and raised.value.detail[0]["loc"] == ["text"]
    with pytest.raises(ApiInputError):
        routes.archival_insert("passage", tags=["has space"])
    added = routes.add_memory(
        messages=[{"role": "user", "content": "hi", "created_at": "2024-03-01T09:30:00Z"}]
    )
    assert added.body == {
        "chat_id": "memories",
        "infer": True,
        "messages": [{"role": "user", "content": "hi", "created_at": "2024-03-01T09:30:00Z"}],
    }


def test_times_are_kept_in_utc_and_written_as_iso_8601() -> None:
    adapter = TypeAdapter(UtcTime)
    assert adapter.validate_python(1_714_555_800.5) == datetime(2024, 5, 1, 9, 30, 0, 500_000, tzinfo=UTC)
    lisbon_summer = timezone(timedelta(hours=1))
    assert adapter.validate_python("2024-05-01T10:30:00+01:00") == datetime(2024, 5, 1, 9, 30, tzinfo=UTC)
    assert adapter.validate_python(datetime(2024, 5, 1, 10, 30, tzinfo=lisbon_summer)).tzinfo is UTC
    assert adapter.dump_json(adapter.validate_python(1_714_555_800)) == b'"2024-05-01T09:30:00Z"'
    with pytest.raises(ValueError, match="timezone"):
        adapter.validate_python("2024-05-01T09:30:00")


def test_fact_and_event_views_carry_every_field_of_the_stored_records() -> None:
    assert list(FactView.model_fields) == list(Fact.model_fields)
    assert list(AuditEventView.model_fields) == list(AuditEvent.model_fields)
    fact = Fact(text="Ann lives in Lisbon", created_at=1_714_555_800.0, expired_at=1_714_556_000.0)
    view = FactView.of(fact)
    assert view.created_at == datetime(2024, 5, 1, 9, 30, tzinfo=UTC) and view.valid_at is None
    assert view.model_dump(mode="json")["expired_at"] == "2024-05-01T09:33:20Z"
    assert view.model_dump(exclude={"created_at", "expired_at"}) == fact.model_dump(
        exclude={"created_at", "expired_at"}
    )
