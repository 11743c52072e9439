"""A key reaches its own tenant only: every route of the API, tried with another tenant's ids in the path,
the query and the body."""

from __future__ import annotations

import re
from typing import Any

from tests.roles.service.conftest import Served

SECRET = "ANN-SECRET"

# One request body per route that takes one (a route missing here fails the test).
BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("post", "/v1/chat"): {"chat_id": "c1", "text": "what do you know about me?", "stream": False},
    ("post", "/v1/memories"): {"text": "Bob plays chess", "infer": False},
    ("put", "/v1/chats/{chat_id}"): {"user_id": "ann", "chat_id": "c1", "turns": []},
    ("put", "/v1/core-blocks/{label}"): {"value": "Bob plays chess"},
    ("post", "/v1/archival"): {"text": "Bob plays chess on Sundays"},
}


async def _plant(served: Served) -> dict[str, str]:
    """Ann's memory: a fact, its history, a chat, a core block, an archival passage."""
    served.llm.add(f"{SECRET}: noted.")
    async with served.client(await served.key("ann")) as ann:
        fact = (
            await ann.post("/v1/memories", json={"text": f"{SECRET} lives in Lisbon", "infer": False})
        ).json()
        await ann.post(
            "/v1/chat", json={"chat_id": "c1", "text": f"{SECRET} is my password", "stream": False}
        )
        event = (await ann.get("/v1/history")).json()[0]
        await ann.put("/v1/core-blocks/human", json={"value": f"{SECRET} is a gardener"})
        passage = (await ann.post("/v1/archival", json={"text": f"{SECRET} keeps notes in Lisbon"})).json()
    return {
        "memory_id": fact["fact"]["id"],
        "event_id": event["id"],
        "chat_id": "c1",
        "label": "human",
        "passage_id": passage["id"],
    }


async def _ann_unchanged(served: Served) -> None:
    async with served.client(await served.key("ann")) as ann:
        facts = (await ann.get("/v1/memories")).json()
        chat = (await ann.get("/v1/chats/c1")).json()
        events = (await ann.get("/v1/history")).json()
        blocks = {b["label"]: b["value"] for b in (await ann.get("/v1/core-blocks")).json()}
        passages = (await ann.get("/v1/archival")).json()
    assert blocks["human"] == f"{SECRET} is a gardener"
    assert [p["text"] for p in passages] == [f"{SECRET} keeps notes in Lisbon"]
    assert [f["text"] for f in facts] == [f"{SECRET} lives in Lisbon"]
    assert chat["chat"]["turns"] == 2 and [e["event"] for e in events] == ["ADD"]


def _routes(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, operation)
        for path, operations in schema["paths"].items()
        if path.startswith("/v1/")
        for method, operation in operations.items()
    ]


async def test_every_route_needs_a_key(served: Served) -> None:
    async with served.client() as anonymous:
        routes = _routes((await anonymous.get("/openapi.json")).json())
        assert len(routes) >= 17
        for method, path, _ in routes:
            url = re.sub(r"\{[^}]+\}", "x", path)
            response = await anonymous.request(method.upper(), url, json=BODIES.get((method, path)))
            assert response.status_code == 401, (method, path)


async def test_foreign_ids_in_path_query_and_body_never_reach_another_tenant(served: Served) -> None:
    ids = await _plant(served)
    served.llm.add("Bob, I know nothing about you yet.")
    async with served.client(await served.key("bob")) as bob:
        routes = _routes((await bob.get("/openapi.json")).json())
        erase = ("delete", "/v1/memory")  # last: erasing bob deletes his keys too
        for method, path, operation in sorted(routes, key=lambda r: (r[0], r[1]) == erase):
            url = path.format(**{name: ids[name] for name in re.findall(r"\{(\w+)\}", path)})
            body = BODIES.get((method, path))
            if "requestBody" in operation:
                assert body is not None, f"no body for {method} {path}: add one to BODIES"
            params = {"q": "Lisbon password"} if path.endswith("/search") else {}
            if path == "/v1/memory":
                params["confirm"] = "true"
            # the path names Ann's ids: Bob reaches only his own namespace
            response = await bob.request(method.upper(), url, json=body, params=params)
            assert SECRET not in response.text, (method, path)
            assert response.status_code in {200, 201, 202, 404, 409}, (method, path, response.text)
            # the query names Ann: refused before anything runs
            for name in ("user_id", "user", "agent_id"):
                named = await bob.request(method.upper(), url, json=body, params={**params, name: "ann"})
                assert named.status_code == 400, (method, path, name)
            # the body names Ann: bodies take no unknown fields
            if body is not None and path != "/v1/chats/{chat_id}":
                named = await bob.request(method.upper(), url, json={**body, "user_id": "ann"}, params=params)
                assert named.status_code == 422 and SECRET not in named.text, (method, path)
    assert all(SECRET not in call.prompt_text for call in served.llm.calls[1:])
    await _ann_unchanged(served)


async def test_an_import_lands_in_the_callers_own_chat_whoever_it_names(served: Served) -> None:
    await _plant(served)
    async with served.client(await served.key("ann")) as ann:
        export = (await ann.get("/v1/chats/c1/export")).json()
    async with served.client(await served.key("bob")) as bob:
        imported = await bob.put("/v1/chats/copy", json=export)  # the export names user "ann"
        assert imported.status_code == 201 and imported.json()["turns"] == 2
        assert [c["id"] for c in (await bob.get("/v1/chats")).json()] == ["copy"]
    await _ann_unchanged(served)


async def test_an_agent_key_sees_the_users_facts_and_its_own_not_another_agents(served: Served) -> None:
    async with served.client(await served.key("ann", agent="writer")) as writer:
        await writer.post("/v1/memories", json={"text": "draft is due Friday", "infer": False})
    async with served.client(await served.key("ann", agent="coder")) as coder:
        await coder.post("/v1/memories", json={"text": "repo uses Python 3.12", "infer": False})
        mine = [f["text"] for f in (await coder.get("/v1/memories")).json()]
        other = (await coder.get("/v1/memories/search", params={"q": "draft Friday"})).json()
    async with served.client(await served.key("ann")) as ann:
        everything = [f["text"] for f in (await ann.get("/v1/memories")).json()]
    assert mine == ["repo uses Python 3.12"] and other == []
    assert sorted(everything) == ["draft is due Friday", "repo uses Python 3.12"]
