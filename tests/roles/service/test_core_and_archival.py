"""Core blocks (the persona included) and archival memory over the served HTTP API, per key, over real Redis.

Keys: ann's own (`owner`), ann as agents `writer` and `coder`, and bob. Each key reads and edits its own
copies of the blocks (the defaults until its first edit); archival passages follow the fact rule: an agent
key sees the user's shared passages and its own, and deletes only its own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from brain.llm.scripted import ScriptedLLM, tool_calls
from brain.settings import Settings
from roles.modes.tiered import DEFAULT_BLOCKS
from tests.roles.service.conftest import Served, served_with

DEFAULT_PERSONA = next(b.value for b in DEFAULT_BLOCKS if b.label == "persona")
EN = "Ann drinks oolong tea every morning before her walk"
ZH = "安喜欢在周末去山里喝乌龙茶"


def _blocks(answer: Any) -> dict[str, str]:
    assert answer.status_code == 200, answer.text
    return {b["label"]: b["value"] for b in answer.json()}


async def test_every_key_sees_its_persona_and_edits_only_its_own_copy(served: Served) -> None:
    keys = {
        name: await served.key(*who)
        for name, who in {
            "owner": ("ann",),
            "writer": ("ann", "writer"),
            "coder": ("ann", "coder"),
            "bob": ("bob",),
        }.items()
    }
    for secret in keys.values():
        async with served.client(secret) as http:
            shown = _blocks(await http.get("/v1/core-blocks"))
        assert shown == {"persona": DEFAULT_PERSONA, "human": ""}
    async with served.client(keys["owner"]) as owner:
        edited = await owner.put("/v1/core-blocks/persona", json={"value": "I am Ann's gardener."})
        assert edited.status_code == 200 and edited.json()["value"] == "I am Ann's gardener."
    async with served.client(keys["writer"]) as writer:
        assert (
            await writer.put("/v1/core-blocks/human", json={"value": "Writes novels."})
        ).status_code == 200
    seen = {}
    for name, secret in keys.items():
        async with served.client(secret) as http:
            seen[name] = _blocks(await http.get("/v1/core-blocks"))
    assert seen["owner"] == {"persona": "I am Ann's gardener.", "human": ""}
    assert seen["writer"] == {"persona": DEFAULT_PERSONA, "human": "Writes novels."}
    assert seen["coder"] == seen["bob"] == {"persona": DEFAULT_PERSONA, "human": ""}


async def test_core_block_edits_are_checked_without_echoing_them(served: Served) -> None:
    async with served.client(await served.key("ann")) as http:
        unknown = await http.put("/v1/core-blocks/secretlabel", json={"value": "x"})
        assert unknown.status_code == 404 and "secretlabel" not in unknown.text
        bad = await http.put("/v1/core-blocks/bad%20label", json={"value": "x"})
        assert bad.status_code == 422 and "bad label" not in bad.text
        long = await http.put("/v1/core-blocks/human", json={"value": "LONGMARK" * 300})
        assert long.status_code == 400 and "LONGMARK" not in long.text and "2000" in long.text
        control = await http.put("/v1/core-blocks/human", json={"value": "CTRLMARK\x07"})
        assert control.status_code == 400 and "CTRLMARK" not in control.text
        extra = await http.put("/v1/core-blocks/human", json={"value": "x", "scope": "EXTRAMARK"})
        assert extra.status_code == 422 and "EXTRAMARK" not in extra.text
        assert _blocks(await http.get("/v1/core-blocks"))["human"] == ""


async def test_archival_insert_search_list_delete_in_english_and_chinese(served: Served) -> None:
    async with served.client(await served.key("ann")) as ann:
        en = await ann.post("/v1/archival", json={"text": EN, "tags": ["Habits"]})
        zh = await ann.post("/v1/archival", json={"text": ZH})
        assert en.status_code == zh.status_code == 201, (en.text, zh.text)
        assert en.json()["tags"] == ["habits"] and en.json()["agent"] is None
        found = (await ann.get("/v1/archival/search", params={"q": "tea in the morning"})).json()
        assert [p["text"] for p in found] == [EN] and found[0]["score"] > 0
        found = (await ann.get("/v1/archival/search", params={"q": "乌龙茶"})).json()
        assert [p["text"] for p in found] == [ZH]
        tagged = (await ann.get("/v1/archival/search", params={"q": "tea 乌龙茶", "tag": "habits"})).json()
        assert [p["text"] for p in tagged] == [EN]
        listed = (await ann.get("/v1/archival")).json()
        assert [p["text"] for p in listed] == [ZH, EN]  # newest first
        assert [p["text"] for p in (await ann.get("/v1/archival", params={"offset": 1})).json()] == [EN]
        gone = await ann.delete(f"/v1/archival/{en.json()['id']}")
        assert gone.status_code == 200 and gone.json()["text"] == EN
        assert [p["text"] for p in (await ann.get("/v1/archival")).json()] == [ZH]
        assert (await ann.get("/v1/archival/search", params={"q": "oolong tea"})).json() == []
        assert (await ann.delete(f"/v1/archival/{en.json()['id']}")).status_code == 404
    async with served.client(await served.key("bob")) as bob:
        assert (await bob.get("/v1/archival")).json() == []
        assert (await bob.get("/v1/archival/search", params={"q": "乌龙茶"})).json() == []
        assert (await bob.delete(f"/v1/archival/{zh.json()['id']}")).status_code == 404
    async with served.client(await served.key("ann")) as ann:
        assert [p["text"] for p in (await ann.get("/v1/archival")).json()] == [ZH]


async def test_an_agent_key_sees_the_shared_passages_and_its_own(served: Served) -> None:
    ids = {}
    for name, who in {"owner": ("ann",), "writer": ("ann", "writer"), "coder": ("ann", "coder")}.items():
        async with served.client(await served.key(*who)) as http:
            stored = await http.post("/v1/archival", json={"text": f"{name} notes about the garden"})
            assert stored.status_code == 201
            ids[name] = stored.json()["id"]
    async with served.client(await served.key("ann", "writer")) as writer:
        listed = (await writer.get("/v1/archival")).json()
        assert {(p["text"].split()[0], p["agent"]) for p in listed} == {("owner", None), ("writer", "writer")}
        found = (await writer.get("/v1/archival/search", params={"q": "garden notes", "limit": 5})).json()
        assert sorted(p["text"].split()[0] for p in found) == ["owner", "writer"]
        assert (await writer.delete(f"/v1/archival/{ids['coder']}")).status_code == 404
        shared = await writer.delete(f"/v1/archival/{ids['owner']}")
        assert shared.status_code == 400 and "shared" in shared.text
        assert (await writer.delete(f"/v1/archival/{ids['writer']}")).status_code == 200
    async with served.client(await served.key("ann")) as owner:
        listed = (await owner.get("/v1/archival")).json()
        assert sorted(p["text"].split()[0] for p in listed) == ["coder", "owner"]
        assert (await owner.delete(f"/v1/archival/{ids['coder']}")).status_code == 200
    async with served.client(await served.key("ann", "coder")) as coder:
        assert [p["text"].split()[0] for p in (await coder.get("/v1/archival")).json()] == ["owner"]


async def test_archival_requests_are_checked_without_echoing_them(served: Served) -> None:
    async with served.client(await served.key("ann")) as http:
        big = await http.post("/v1/archival", json={"text": "大" * 3_000})  # 9,000 bytes
        assert big.status_code == 400 and "大" not in big.text and "8,000 bytes" in big.text
        answers = [
            await http.post("/v1/archival", json={"text": "x", "tags": ["TAGMARK:x"]}),
            await http.post("/v1/archival", json={"text": "x", "owner": "TAGMARK"}),
            await http.post("/v1/archival", json={"text": "x", "tags": [f"t{i}" for i in range(17)]}),
            await http.get("/v1/archival", params={"limit": 0}),
            await http.get("/v1/archival", params={"tag": "TAGMARK x"}),
        ]
        assert [a.status_code for a in answers] == [422] * 5
        assert not any("TAGMARK" in a.text for a in answers)
        stop = await http.get("/v1/archival/search", params={"q": "the of and"})
        assert stop.status_code == 400 and "the of" not in stop.text
        padded = await http.delete("/v1/archival/%20IDMARK")
        assert padded.status_code == 400 and "IDMARK" not in padded.text
        assert (await http.get("/v1/archival")).json() == []


@pytest.fixture
async def tiered(redis_server_url: str) -> AsyncIterator[Served]:
    settings = Settings.model_validate(
        {
            "redis": {"key_prefix": "svc"},
            "memory": {"mode": "tiered", "facts": {"enabled": False}},
            "serve": {"rate_limit": 0, "auth_failure_limit": 0},
        }
    )
    async with served_with(ScriptedLLM(), settings, redis_server_url) as served:
        yield served


async def test_in_tiered_mode_the_model_sees_the_keys_own_persona(tiered: Served) -> None:
    owner, writer = await tiered.key("ann"), await tiered.key("ann", "writer")
    async with tiered.client(owner) as http:
        edit = await http.put("/v1/core-blocks/persona", json={"value": "PERSONAMARK: I am Ann's gardener."})
        assert edit.status_code == 200
    tiered.llm.add(
        tool_calls(
            ("core_memory_append", {"label": "human", "content": "WRITERMARK", "request_heartbeat": True})
        ),
        tool_calls(("send_message", {"message": "Noted."})),
    )
    async with tiered.client(writer) as http:
        said = await http.post("/v1/chat", json={"text": "I write novels.", "stream": False})
        assert said.status_code == 200, said.text
        assert _blocks(await http.get("/v1/core-blocks")) == {
            "persona": DEFAULT_PERSONA,
            "human": "WRITERMARK",
        }
    assert not any("PERSONAMARK" in c.prompt_text for c in tiered.llm.calls)
    tiered.llm.add(tool_calls(("send_message", {"message": "Hello."})))
    async with tiered.client(owner) as http:
        assert (
            await http.post("/v1/chat", json={"text": "Who are you?", "stream": False})
        ).status_code == 200
        assert _blocks(await http.get("/v1/core-blocks"))["human"] == ""
    assert "PERSONAMARK" in tiered.llm.calls[-1].prompt_text
    assert "WRITERMARK" not in tiered.llm.calls[-1].prompt_text
    tiered.llm.assert_consumed()


async def test_erasing_an_agent_takes_its_passages_and_keeps_the_shared_ones(served: Served) -> None:
    owner, writer = await served.key("ann"), await served.key("ann", "writer")
    async with served.client(owner) as ann, served.client(writer) as agent:
        shared = (await ann.post("/v1/archival", json={"text": EN})).json()
        own = (await agent.post("/v1/archival", json={"text": ZH})).json()
        erased = await agent.delete("/v1/memory", params={"confirm": "true"})
        assert erased.status_code == 200 and erased.json()["archival_passages"] == 1
        left = [p["id"] for p in (await ann.get("/v1/archival")).json()]
    assert left == [shared["id"]] and own["id"] not in left


async def test_what_the_model_stores_in_an_agents_chat_is_that_agents(tiered: Served) -> None:
    owner, writer, coder = [await tiered.key("ann", *agent) for agent in ((), ("writer",), ("coder",))]
    tiered.llm.add(
        tool_calls(
            ("archival_memory_insert", {"content": "WRITERPASSAGE plot notes", "request_heartbeat": True})
        ),
        tool_calls(("send_message", {"message": "Stored."})),
        tool_calls(("archival_memory_search", {"query": "WRITERPASSAGE plot", "request_heartbeat": True})),
        tool_calls(("send_message", {"message": "Nothing."})),
    )
    async with tiered.client(writer) as http:
        assert (
            await http.post("/v1/chat", json={"text": "Keep my plot notes", "stream": False})
        ).status_code == 200
        assert [p["agent"] for p in (await http.get("/v1/archival")).json()] == ["writer"]
    async with tiered.client(coder) as http:
        assert (await http.get("/v1/archival")).json() == []  # another agent's: not seen
        assert (
            await http.post("/v1/chat", json={"text": "Any plot notes?", "stream": False})
        ).status_code == 200
    assert "WRITERPASSAGE" not in tiered.llm.calls[-1].prompt_text  # nor found by its model's search
    async with tiered.client(owner) as http:
        assert [p["text"] for p in (await http.get("/v1/archival")).json()] == ["WRITERPASSAGE plot notes"]
    tiered.llm.assert_consumed()
