"""Scope is enforced on the server, per route and per tool: every `/v1` route of the real app, called by
four keys, and every MCP tool, called by two, against the memory of agent `writer` of user `ann`, over
real Redis.

Callers: `own` (ann as writer), `agent` (ann as coder: another agent of the same user), `user` (bob as
writer: another user, with the same agent name), `owner` (ann's user-wide key). Outcomes:

- `shows`: 2xx, and the answer (or the prompt the model got) holds writer's memory;
- `changes`: 2xx, and writer's memory changed (retired, rolled back, appended to or erased);
- `shows+changes`: both (e.g. a retired fact in the answer);
- `hidden`: 2xx, nothing of writer's memory in the answer or the prompt, and writer's memory unchanged;
- `403`: the route is not for this kind of key (whatever memory it names), and writer's memory unchanged;
- `404`: not found (nothing says writer's memory exists), and writer's memory unchanged;
- `409`: refused as a conflict, and writer's memory unchanged;
- `refused`: an MCP tool error, and writer's memory unchanged.

Each cell starts from an emptied Redis and writer's memory planted anew: a fact of writer (`FACT`), a
chat `c1` of writer (`CHAT`) whose fact extraction was parked as a dead letter quoting it, writer's own copy
of the `human` core block (`BLOCK`), an archival passage of writer (`PASSAGE`), a shared fact of ann that
every agent of hers sees.
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from brain.backends.redis import RedisBackend
from tests.roles.service.conftest import Served

FACT = "FACTMARK lives in Lisbon"
CHAT = "CHATMARK is my password"
BLOCK = "BLOCKMARK writes novels"
PASSAGE = "PASSMARK keeps her notes in a red folder"
SHARED = "Ann keeps a cat called Tom"
MARKS = ("FACTMARK", "CHATMARK", "BLOCKMARK", "PASSMARK")
CALLERS = {
    "own": ("ann", "writer"),
    "agent": ("ann", "coder"),
    "user": ("bob", "writer"),
    "owner": ("ann", None),
}

# (method, path): expected outcome for own, agent, user, owner. A route of the app missing here fails.
MATRIX: dict[tuple[str, str], tuple[str, str, str, str]] = {
    ("get", "/v1/me"): ("hidden", "hidden", "hidden", "hidden"),
    ("post", "/v1/chat"): ("shows+changes", "hidden", "hidden", "hidden"),
    ("post", "/v1/memories"): ("changes", "hidden", "hidden", "hidden"),
    ("get", "/v1/memories"): ("shows", "hidden", "hidden", "shows"),
    ("get", "/v1/memories/search"): ("shows", "hidden", "hidden", "shows"),
    ("get", "/v1/memories/{memory_id}"): ("shows", "404", "404", "shows"),
    ("get", "/v1/memories/{memory_id}/history"): ("shows", "404", "404", "shows"),
    ("delete", "/v1/memories/{memory_id}"): ("shows+changes", "404", "404", "shows+changes"),
    ("get", "/v1/history"): ("shows", "hidden", "hidden", "shows"),
    ("post", "/v1/history/{event_id}/rollback"): ("shows+changes", "404", "404", "shows+changes"),
    ("get", "/v1/chats"): ("shows", "hidden", "hidden", "hidden"),
    ("get", "/v1/chats/{chat_id}"): ("shows", "404", "404", "404"),
    ("get", "/v1/chats/{chat_id}/export"): ("shows", "404", "404", "404"),
    ("put", "/v1/chats/{chat_id}"): ("409", "hidden", "hidden", "hidden"),
    ("delete", "/v1/chats/{chat_id}"): ("changes", "hidden", "hidden", "hidden"),
    ("delete", "/v1/memory"): ("changes", "hidden", "hidden", "changes"),
    ("get", "/v1/core-blocks"): ("shows", "hidden", "hidden", "hidden"),
    ("put", "/v1/core-blocks/{label}"): ("changes", "hidden", "hidden", "hidden"),
    ("post", "/v1/archival"): ("changes", "hidden", "hidden", "hidden"),
    ("get", "/v1/archival"): ("shows", "hidden", "hidden", "shows"),
    ("get", "/v1/archival/search"): ("shows", "hidden", "hidden", "shows"),
    ("delete", "/v1/archival/{passage_id}"): ("shows+changes", "404", "404", "shows+changes"),
    ("get", "/v1/usage"): ("shows", "hidden", "hidden", "hidden"),
    ("get", "/v1/graph"): ("hidden", "hidden", "hidden", "hidden"),
    ("get", "/v1/dead-letters"): ("shows", "hidden", "hidden", "hidden"),
    ("get", "/v1/stats"): ("403", "403", "403", "hidden"),
}

# What a route is sent besides its path: a body (with `{export}`: writer's chat exported, its text
# neutralised), query parameters.
BODIES: dict[tuple[str, str], Any] = {
    ("post", "/v1/chat"): {"chat_id": "c1", "text": "what did I tell you?", "stream": False},
    ("post", "/v1/memories"): {"text": "one more thing", "chat_id": "c1"},
    ("put", "/v1/chats/{chat_id}"): "{export}",
    ("put", "/v1/core-blocks/{label}"): {"value": "edited"},
    ("post", "/v1/archival"): {"text": "one more passage"},
}
PARAMS: dict[tuple[str, str], dict[str, str]] = {
    ("get", "/v1/memories/search"): {"q": "Lisbon"},
    ("delete", "/v1/memory"): {"confirm": "true"},
    ("get", "/v1/archival/search"): {"q": "notes folder"},
}


@dataclass
class Planted:
    ids: dict[str, str]  # memory_id, event_id, chat_id, label, passage_id
    export: dict[str, Any]
    shared_id: str


def _routes(schema: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m, p) for p, ops in schema["paths"].items() if p.startswith("/v1/") for m in ops]


async def _plant(served: Served) -> Planted:
    await served.redis.flushdb()
    served.llm.add("Noted.")
    async with served.client(await served.key("ann", "writer")) as own:
        fact = (await own.post("/v1/memories", json={"text": FACT, "infer": False})).json()["fact"]
        reply = await own.post("/v1/chat", json={"chat_id": "c1", "text": CHAT, "stream": False})
        assert reply.status_code == 200, reply.text
        event = (await own.get(f"/v1/memories/{fact['id']}/history")).json()[0]
        export = (await own.get("/v1/chats/c1/export")).json()
        assert (await own.put("/v1/core-blocks/human", json={"value": BLOCK})).status_code == 200
        passage = (await own.post("/v1/archival", json={"text": PASSAGE})).json()
    queue = RedisBackend(served.redis, prefix="svc").queue
    await queue.park(await queue.read("planter", 10, None), f"no JSON in the reply: {CHAT!r}", 3)
    async with served.client(await served.key("ann")) as owner:
        shared = (await owner.post("/v1/memories", json={"text": SHARED, "infer": False})).json()["fact"]
    neutral = json.loads(json.dumps(export).replace("CHATMARK", "someone"))
    ids = {
        "memory_id": fact["id"],
        "event_id": event["id"],
        "chat_id": "c1",
        "label": "human",
        "passage_id": passage["id"],
    }
    return Planted(ids, neutral, shared["id"])


async def _writers_memory(served: Served, planted: Planted) -> tuple[Any, ...]:
    """Writer's memory as its own key and the owner see it (new keys: an erasure revokes the user's), what
    a refused call must leave as it was."""
    async with served.client(await served.key("ann", "writer")) as own:
        fact = await own.get(f"/v1/memories/{planted.ids['memory_id']}")
        chat = await own.get("/v1/chats/c1")
        events = (await own.get("/v1/history")).json()
        blocks = (await own.get("/v1/core-blocks")).json()
        passages = (await own.get("/v1/archival")).json()
    async with served.client(await served.key("ann")) as owner:
        shared = await owner.get(f"/v1/memories/{planted.shared_id}")
    return (
        fact.status_code,
        fact.json().get("expired_at", "gone"),
        chat.status_code,
        chat.json().get("chat", {}).get("turns"),
        [e["id"] for e in events],
        shared.json().get("expired_at", "gone"),
        blocks,
        [p["id"] for p in passages if p["agent"] == "writer"],
    )


def _shows(method: str, path: str, response: httpx2.Response, prompts: str) -> bool:
    """Whether writer's memory is in the answer or in what the model was sent."""
    if any(mark in response.text or mark in prompts for mark in MARKS):
        return True
    if (method, path) == ("get", "/v1/chats"):
        return any(c["id"] == "c1" for c in response.json())
    if (method, path) == ("get", "/v1/usage"):
        return any(r["chat_id"] == "c1" for r in response.json()["rows"])
    return False


async def _cell(served: Served, method: str, path: str, caller: str) -> tuple[str, str]:
    """One call of one route by one caller on freshly planted memory: (the outcome seen, a detail)."""
    planted = await _plant(served)
    before = await _writers_memory(served, planted)
    user, agent = CALLERS[caller]
    url = path.format(**{name: planted.ids[name] for name in re.findall(r"\{(\w+)\}", path)})
    body = BODIES.get((method, path))
    body = planted.export if body == "{export}" else body
    calls = len(served.llm.calls)
    if (method, path) == ("post", "/v1/chat"):
        served.llm.add("Here is what I know.")
    async with served.client(await served.key(user, agent)) as http:
        response = await http.request(method.upper(), url, json=body, params=PARAMS.get((method, path)))
    prompts = "\n".join(c.prompt_text for c in served.llm.calls[calls:])
    changed = await _writers_memory(served, planted) != before
    status = response.status_code
    if status >= 300 and status not in (403, 404, 409):
        return f"status {status}", response.text[:200]
    refused = str(status) if status >= 300 else None
    return _seen(refused, _shows(method, path, response, prompts), changed), response.text[:200]


def _seen(refused: str | None, shown: bool, changed: bool) -> str:
    """The outcome of a call (see the top), from what it answered and did to writer's memory."""
    if refused is not None:
        return "leaks" if shown or changed else refused
    return "+".join(["shows"] * shown + ["changes"] * changed) or "hidden"


async def test_every_route_by_every_key_reaches_only_its_scope(served: Served) -> None:
    async with served.client() as anonymous:
        routes = _routes((await anonymous.get("/openapi.json")).json())
    assert sorted(routes) == sorted(MATRIX), "every /v1 route needs its row in MATRIX"
    cells = 0
    for (method, path), expected in MATRIX.items():
        for caller, outcome in zip(CALLERS, expected, strict=True):
            seen, detail = await _cell(served, method, path, caller)
            assert seen == outcome, (method, path, caller, detail)
            cells += 1
    assert (len(routes), cells) == (26, 104)


async def test_an_agents_erase_leaves_the_shared_facts_and_the_other_agents(served: Served) -> None:
    planted = await _plant(served)
    served.llm.add("Coder noted.")
    async with served.client(await served.key("ann", "coder")) as coder:
        await coder.post("/v1/chat", json={"chat_id": "c1", "text": "coder's chat", "stream": False})
        coder_fact = (await coder.post("/v1/memories", json={"text": "repo is big", "infer": False})).json()
    async with served.client(await served.key("ann", "writer")) as own:
        await own.post("/v1/memories", json={"text": "second chat", "chat_id": "notes"})
        report = (await own.delete("/v1/memory", params={"confirm": "true"})).json()
        assert (await own.get("/v1/chats")).json() == []
        assert [f["text"] for f in (await own.get("/v1/memories")).json()] == [SHARED]
    assert report["chats"] == 2 and report["remaining"] == []
    async with served.client(await served.key("ann", "coder")) as coder:
        assert [c["id"] for c in (await coder.get("/v1/chats")).json()] == ["c1"]
        assert (await coder.get(f"/v1/memories/{coder_fact['fact']['id']}")).json()["expired_at"] is None
    async with served.client(await served.key("ann")) as owner:
        facts = {
            f["id"]: f for f in (await owner.get("/v1/memories", params={"include_retired": True})).json()
        }
    assert facts[planted.shared_id]["expired_at"] is None
    assert planted.ids["memory_id"] not in facts  # erased for good, not retired


# The MCP tools over the same service: tool -> expected outcome for own, agent ("refused": a tool error,
# writer's memory unchanged). A tool of the server missing here fails.
TOOLS: dict[str, tuple[str, str]] = {
    "add_memory": ("changes", "hidden"),
    "search_memories": ("shows", "hidden"),
    "list_memories": ("shows", "hidden"),
    "memory_history": ("shows", "refused"),
    "delete_memory": ("shows+changes", "refused"),
    "converse": ("shows+changes", "hidden"),
    "archival_insert": ("changes", "hidden"),
    "archival_search": ("shows", "hidden"),
    "archival_list": ("shows", "hidden"),
    "archival_delete": ("shows+changes", "refused"),
    "core_memory_view": ("shows", "hidden"),
    "core_memory_edit": ("changes", "hidden"),
    "memory": ("changes", "refused"),
}
ARGUMENTS: dict[str, dict[str, Any]] = {
    "add_memory": {"messages": [{"role": "user", "content": "one more thing"}], "chat_id": "c1"},
    "search_memories": {"query": "Lisbon"},
    "list_memories": {},
    "memory_history": {"memory_id": "{memory_id}"},
    "delete_memory": {"memory_id": "{memory_id}"},
    "converse": {"text": "what did I tell you?", "chat_id": "c1"},
    "archival_insert": {"text": "one more passage"},
    "archival_search": {"query": "notes folder"},
    "archival_list": {},
    "archival_delete": {"passage_id": "{passage_id}"},
    "core_memory_view": {},
    "core_memory_edit": {"label": "human", "value": "edited"},
    "memory": {
        "command": "str_replace",
        "path": "/memories/blocks/human",
        "old_str": "BLOCKMARK",
        "new_str": "X",
    },
}


@pytest.fixture
def _collect_sockets() -> Iterator[None]:
    yield
    gc.collect()  # the SDK's HTTP client leaves a pooled socket behind (see test_mcp.py)


@pytest.mark.usefixtures("_collect_sockets")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_every_mcp_tool_by_its_own_agent_and_another(served: Served) -> None:
    cells = 0
    for tool, expected in TOOLS.items():
        for caller, outcome in zip(("own", "agent"), expected, strict=True):
            planted = await _plant(served)
            before = await _writers_memory(served, planted)
            arguments = {
                k: planted.ids[v[1:-1]] if isinstance(v, str) and v.startswith("{") else v
                for k, v in ARGUMENTS[tool].items()
            }
            calls = len(served.llm.calls)
            if tool == "converse":
                served.llm.add("Here is what I know.")
            transport = streamable_http_client(
                f"{served.url}/mcp",
                http_client=httpx2.AsyncClient(
                    headers={"Authorization": f"Bearer {await served.key(*CALLERS[caller])}"}, timeout=30
                ),
            )
            async with Client(transport) as client:
                if cells == 0:
                    assert {t.name for t in (await client.list_tools()).tools} == set(TOOLS)
                result = await client.call_tool(tool, arguments)
            text = json.dumps([c.model_dump(mode="json") for c in result.content], ensure_ascii=False)
            prompts = "\n".join(c.prompt_text for c in served.llm.calls[calls:])
            changed = await _writers_memory(served, planted) != before
            shown = any(m in text or m in prompts for m in MARKS)
            seen = _seen("refused" if result.is_error else None, shown, changed)
            assert seen == outcome, (tool, caller, text[:300])
            cells += 1
    assert cells == 26


async def test_another_agents_turn_is_not_given_writers_facts(served: Served) -> None:
    await _plant(served)
    served.llm.add("I do not know.")
    async with served.client(await served.key("ann", "coder")) as coder:
        asked = {"chat_id": "c9", "text": "Who lives in Lisbon?", "stream": False}
        assert (await coder.post("/v1/chat", json=asked)).status_code == 200
    assert "FACTMARK" not in served.llm.calls[-1].prompt_text
