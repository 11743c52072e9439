"""The HTTP API with real HTTP clients against uvicorn, over real Redis."""

from __future__ import annotations

import json

import pytest

from tests.roles.service.conftest import Served


async def test_health_readiness_and_openapi(served: Served) -> None:
    async with served.client() as http:
        assert (await http.get("/healthz")).json()["status"] == "ok"
        assert (await http.get("/readyz")).json() == {"status": "ready"}
        schema = (await http.get("/openapi.json")).json()
    paths = schema["paths"]
    for path in ("/v1/chat", "/v1/memories", "/v1/memories/search", "/v1/history/{event_id}/rollback"):
        assert path in paths
    assert "/v1/chats/{chat_id}/export" in paths and "delete" in paths["/v1/memory"]


async def test_no_key_a_wrong_key_and_a_revoked_key_are_refused(served: Served) -> None:
    secret = await served.key("ann")
    async with served.client() as anonymous:
        response = await anonymous.get("/v1/memories")
        assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer"
    async with served.client(secret[:-2] + "xx") as wrong:
        assert (await wrong.get("/v1/memories")).status_code == 401
    async with served.client(secret) as http:
        assert (await http.get("/v1/me")).json() == {"user": "ann", "agent": None}
        key_id = secret.split("_")[1]
        await served.keys.revoke(key_id)
        assert (await http.get("/v1/me")).status_code == 401


async def test_add_list_search_history_delete_and_rollback(served: Served) -> None:
    async with served.client(await served.key("ann")) as http:
        added = await http.post("/v1/memories", json={"text": "Ann lives in Lisbon", "infer": False})
        assert added.status_code == 201
        fact = added.json()["fact"]
        await http.post("/v1/memories", json={"text": "我喜欢喝乌龙茶", "infer": False})
        listed = (await http.get("/v1/memories")).json()
        assert [f["text"] for f in listed] == ["Ann lives in Lisbon", "我喜欢喝乌龙茶"]
        found = (await http.get("/v1/memories/search", params={"q": "乌龙茶"})).json()
        assert [f["text"] for f in found] == ["我喜欢喝乌龙茶"]
        deleted = await http.delete(f"/v1/memories/{fact['id']}", params={"reason": "moved"})
        assert deleted.json()["expired_at"] is not None
        assert [f["text"] for f in (await http.get("/v1/memories")).json()] == ["我喜欢喝乌龙茶"]
        events = (await http.get(f"/v1/memories/{fact['id']}/history")).json()
        assert [e["event"] for e in events] == ["ADD", "DELETE"]
        assert events[1]["reason"] == "moved" and events[1]["actor"].startswith("key:")
        undone = await http.post(f"/v1/history/{events[1]['id']}/rollback")
        assert undone.status_code == 200 and undone.json()["event"] == "DELETE"
        assert len((await http.get("/v1/memories")).json()) == 2
        everything = (await http.get("/v1/history")).json()
        assert [e["event"] for e in everything][-1] == "ROLLBACK"


async def test_infer_stores_turns_and_queues_them_for_facts(served: Served) -> None:
    async with served.client(await served.key("ann")) as http:
        body = {
            "messages": [
                {"role": "user", "content": "I adopted a cat"},
                {"role": "assistant", "content": "Nice!"},
            ]
        }
        added = await http.post("/v1/memories", json=body)
        assert added.status_code == 202
        assert added.json() == {"chat_id": "memories", "turns": 2, "queued": True, "fact": None}
        chat = (await http.get("/v1/chats/memories")).json()
    assert [t["content"] for t in chat["turns"]] == ["I adopted a cat", "Nice!"]
    assert await served.redis.xlen("svc:{queue}:facts") == 1


async def test_messages_added_with_their_own_times_are_stored_with_them(served: Served) -> None:
    """A backfill over HTTP: each message keeps its time (the time its facts hold from); a time without a
    zone is refused, nothing stored."""
    old = {"role": "user", "content": "I moved to Porto", "created_at": "2024-03-01T09:30:00+00:00"}
    async with served.client(await served.key("ann")) as http:
        naive = await http.post("/v1/memories", json={"messages": [old | {"created_at": "2024-03-01T09:30"}]})
        assert naive.status_code == 422
        added = await http.post("/v1/memories", json={"messages": [old], "chat_id": "past"})
        assert added.status_code == 202
        chat = (await http.get("/v1/chats/past")).json()
    assert [t["content"] for t in chat["turns"]] == ["I moved to Porto"]
    assert chat["turns"][0]["at"].startswith("2024-03-01T09:30:00")


async def test_chat_streams_server_sent_events_and_remembers(served: Served) -> None:
    served.llm.add("Hello Ann, nice to meet you.")
    async with served.client(await served.key("ann")) as http:
        async with http.stream(
            "POST", "/v1/chat", json={"chat_id": "c1", "text": "Hi, I am Ann"}
        ) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            raw = (await response.aread()).decode()
        chats = (await http.get("/v1/chats")).json()
    events = [block.split("\n") for block in raw.strip().split("\n\n")]
    kinds = [lines[0].removeprefix("event: ") for lines in events]
    assert kinds[-1] == "done" and set(kinds[:-1]) == {"delta"}
    text = "".join(json.loads(lines[1].removeprefix("data: "))["text"] for lines in events[:-1])
    assert text == "Hello Ann, nice to meet you." == json.loads(events[-1][1].removeprefix("data: "))["text"]
    assert [(c["id"], c["turns"]) for c in chats] == [("c1", 2)]
    assert "Hi, I am Ann" in served.llm.calls[0].prompt_text


async def test_usage_per_chat_and_model_is_readable_and_stays_the_users(served: Served) -> None:
    served.llm.add("Hello Ann.")
    served.llm.add("Hello again.")
    served.llm.add("Hi Bob.")
    async with served.client(await served.key("ann")) as ann, served.client(await served.key("bob")) as bob:
        for chat in ("c1", "c2"):
            reply = await ann.post("/v1/chat", json={"chat_id": chat, "text": "Hi", "stream": False})
            assert reply.status_code == 200
        await bob.post("/v1/chat", json={"chat_id": "c1", "text": "Hi", "stream": False})
        mine, theirs = (await ann.get("/v1/usage")).json(), (await bob.get("/v1/usage")).json()
    model = served.llm.model
    assert [(r["chat_id"], r["model"], r["calls"]) for r in mine["rows"]] == [
        ("c1", model, 1),
        ("c2", model, 1),
    ]
    assert mine["calls"] == 2 and mine["prompt_tokens"] == sum(r["prompt_tokens"] for r in mine["rows"]) > 0
    assert [(r["chat_id"], r["calls"]) for r in theirs["rows"]] == [("c1", 1)]


async def test_a_failing_model_is_an_http_error_and_the_question_stays_pending(served: Served) -> None:
    from brain.errors import LLMError

    served.llm.add(LLMError("scripted: the endpoint is down"))
    async with served.client(await served.key("ann")) as http:
        response = await http.post("/v1/chat", json={"chat_id": "c1", "text": "Are you there?"})
        assert response.status_code == 502 and "language model" in response.json()["detail"]
        assert "endpoint is down" not in response.text and response.json()["request_id"]  # details: logs
        chat = (await http.get("/v1/chats/c1")).json()
    assert chat["chat"]["turns"] == 0


@pytest.mark.serve(max_body_bytes=2048)
async def test_bodies_over_the_limit_are_refused(served: Served) -> None:
    async with served.client(await served.key("ann")) as http:
        response = await http.post("/v1/memories", json={"text": "x" * 5000, "infer": False})
        assert response.status_code == 413

        async def chunks():  # no Content-Length: counted as it arrives
            for _ in range(5):
                yield b"x" * 1000

        streamed = await http.post(
            "/v1/memories", content=chunks(), headers={"content-type": "application/json"}
        )
        assert streamed.status_code == 413
        assert (await http.get("/v1/memories")).json() == []


@pytest.mark.serve(rate_limit=5, rate_window_seconds=60)
async def test_each_key_has_its_own_rate_limit(served: Served) -> None:
    async with served.client(await served.key("ann")) as ann, served.client(await served.key("bob")) as bob:
        codes = [(await ann.get("/v1/me")).status_code for _ in range(6)]
        assert codes == [200] * 5 + [429]
        limited = await ann.get("/v1/me")
        assert int(limited.headers["retry-after"]) >= 1
        assert (await bob.get("/v1/me")).status_code == 200


@pytest.mark.serve(auth_failure_limit=4, rate_window_seconds=60)
async def test_failed_authentication_is_rate_limited_per_address(served: Served) -> None:
    secret = await served.key("ann")
    async with served.client("bk_0000000000000000_guess") as guessing, served.client(secret) as ann:
        codes = [(await guessing.get("/v1/me")).status_code for _ in range(6)]
        assert codes == [401] * 4 + [429] * 2
        limited = await guessing.get("/v1/me")
        assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
        assert (await ann.get("/v1/me")).status_code == 200  # a good key is not counted, nor refused


async def test_bad_input_gets_clear_errors_before_any_cost(served: Served) -> None:
    async with served.client(await served.key("ann")) as http:
        assert (await http.post("/v1/memories", json={})).status_code == 400
        assert (await http.post("/v1/chat", json={"text": "   "})).status_code == 400
        assert (await http.get("/v1/memories/search", params={"q": "the"})).status_code == 400
        assert (await http.get("/v1/memories", params={"as_of": "last May"})).status_code == 400
        assert (await http.get("/v1/memories/nope")).status_code == 404
        assert (await http.delete("/v1/memory")).status_code == 400
        assert (
            await http.post("/v1/chat", content=b"{not json", headers={"content-type": "application/json"})
        ).status_code == 422


async def test_bad_text_and_ids_get_a_4xx_naming_the_field_and_are_never_echoed(served: Served) -> None:
    probes = [
        ("/v1/memories", '{"text": "pin \\ud800 4321", "infer": false}', "memory"),
        ("/v1/memories", '{"text": "pin \\ud800 4321", "chat_id": "c"}', "memory"),
        ("/v1/chat", '{"text": "pin \\ud800 4321", "chat_id": "c", "stream": false}', "text"),
        ("/v1/chat", '{"text": "pin 4321", "chat_id": "c\\udfff", "stream": false}', "chat_id"),
        ("/v1/memories", '{"text": 4321}', "text"),
        ("/v1/chat", '{"text": "pin 4321", "chat_id": "trip/4321", "stream": false}', "chat_id"),
        ("/v1/memories", '{"text": "pin 4321", "chat_id": " 4321 "}', "chat_id"),
    ]
    turn = '{"seq": 1, "tokens": 3, "message": {"content": "pin \\ud800 4321", "role": "user"}}'
    imports = [
        ('{"user_id": "u", "chat_id": "c", "summary": "pin \\udfff 4321"}', "summary"),
        ('{"user_id": "u", "chat_id": "c", "title": "pin \\ud800 4321"}', "title"),
        ('{"user_id": "u", "chat_id": "c", "turns": [' + turn + "]}", "turns.0.message.content"),
    ]
    async with served.client(await served.key("ann")) as ann:
        for path, body, field in probes:
            response = await ann.post(path, content=body, headers={"content-type": "application/json"})
            assert response.status_code in {400, 422}, (path, body, response.text)
            assert field in response.text and "4321" not in response.text, (path, body, response.text)
        for body, field in imports:
            response = await ann.put(
                "/v1/chats/c4", content=body, headers={"content-type": "application/json"}
            )
            assert response.status_code == 422, (body, response.text)
            assert field in response.text and "4321" not in response.text, (body, response.text)
        for path in ("/v1/chats/zq4321", "/v1/memories/zq4321", "/v1/memories?as_of=zq4321"):
            response = await ann.get(path)
            assert response.status_code in {400, 404} and "4321" not in response.text, (path, response.text)
        assert (await ann.get("/v1/chats")).json() == []
    assert served.llm.calls == []  # refused before any model call


def test_a_5xx_says_a_reason_and_a_request_id_and_logs_the_details(caplog: pytest.LogCaptureFixture) -> None:
    from brain.errors import ErasedError, NotFoundError, StoreError
    from roles.failures import answer

    failure = StoreError("Redis EVALSHA failed: ConnectionError: 10.0.0.5:6379 brain:{f.bYW5u}:facts")
    with caplog.at_level("WARNING", logger="brain.http"):
        status, body = answer(failure)
    assert status == 503 and body["request_id"] in body["detail"]
    assert "10.0.0.5" not in str(body) and "brain:{" not in str(body)
    assert body["request_id"] in caplog.text and "10.0.0.5" in caplog.text  # for whoever runs the server
    assert answer(NotFoundError("there is no chat 'x'")) == (404, {"detail": "there is no chat 'x'"})
    assert answer(ErasedError("erased meanwhile"))[0] == 409
    assert answer(RuntimeError("boom"))[0] == 500 and "boom" not in str(answer(RuntimeError("boom"))[1])


async def test_a_message_too_long_for_the_model_is_refused_or_archived_when_asked(served: Served) -> None:
    text = "记住这个 zqarchmark. " * 30_000  # ~150k tokens: past the model's 128k window, within 1 MiB
    async with served.client(await served.key("ann")) as http:
        refused = await http.post("/v1/chat", json={"chat_id": "c1", "text": text, "stream": False})
        archived = await http.post("/v1/chat", json={"chat_id": "c1", "text": text, "oversize": "archive"})
        again = await http.post("/v1/chat", json={"chat_id": "c1", "text": text, "oversize": "archive"})
        chats = (await http.get("/v1/chats")).json()
    assert refused.status_code == 413 and "context window of 128000" in refused.json()["detail"]
    assert "zqarchmark" not in refused.text
    assert archived.status_code == 202 and archived.json()["passages"] > 100
    assert archived.json()["chat_id"] == "c1" and "chat c1" in archived.json()["source"]
    assert again.status_code == 202 and again.json()["unchanged"] and again.json()["passages"] == 0
    assert chats == []  # no turn was stored
    assert served.llm.calls == []  # nothing was sent to the model


async def test_a_chat_retried_with_its_message_id_gives_the_stored_answer_and_one_turn(
    served: Served,
) -> None:
    served.llm.add("Hello Ann.")  # one reply: a second model call would fail loudly
    body = {"chat_id": "c1", "text": "Hi", "message_id": "req-42", "stream": False}
    async with served.client(await served.key("ann")) as http:
        first = await http.post("/v1/chat", json=body)
        again = await http.post("/v1/chat", json=body)
        async with http.stream("POST", "/v1/chat", json={**body, "stream": True}) as response:
            raw = (await response.aread()).decode()
        chats = (await http.get("/v1/chats")).json()
    assert first.json()["text"] == again.json()["text"] == "Hello Ann."
    assert '"text": "Hello Ann."' in raw.split("event: done")[1]
    assert [(c["id"], c["turns"]) for c in chats] == [("c1", 2)]
    assert len(served.llm.calls) == 1


async def test_messages_added_again_with_their_ids_are_stored_once(served: Served) -> None:
    body = {
        "chat_id": "notes",
        "messages": [{"content": "I moved to Lisbon", "id": "n-1"}, {"content": "I like tea", "id": "n-2"}],
    }
    async with served.client(await served.key("ann")) as http:
        first = await http.post("/v1/memories", json=body)
        again = await http.post("/v1/memories", json=body)
        chats = (await http.get("/v1/chats")).json()
    assert first.status_code == again.status_code == 202
    assert first.json()["turns"] == again.json()["turns"] == 2
    assert [(c["id"], c["turns"]) for c in chats] == [("notes", 2)]
