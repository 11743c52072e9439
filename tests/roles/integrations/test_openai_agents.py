"""The OpenAI Agents SDK adapter against the real SDK: items round-trip exactly through Redis, and an agent
run by the SDK's own Runner (a scripted chat-completions server) keeps its history and searches memory."""

from __future__ import annotations

import json
from typing import Any

import pytest

agents = pytest.importorskip("agents")

from openai import AsyncOpenAI  # noqa: E402

from brain.errors import InputError  # noqa: E402
from brain.runtime import Runtime  # noqa: E402
from brain.search.index import IndexedDoc  # noqa: E402
from roles.integrations.openai_agents import BrainSession, memory_search_tool  # noqa: E402
from tests.support.openai_server import Chat, ScriptedOpenAIServer  # noqa: E402

ITEMS: list[Any] = [
    {"role": "user", "content": "what is my locker code?"},
    {
        "type": "function_call",
        "call_id": "call_1",
        "name": "search_memory",
        "arguments": '{"query": "locker code"}',
        "id": "fc_1",
        "status": "completed",
    },
    {"type": "function_call_output", "call_id": "call_1", "output": '[{"text": "locker 4411"}]'},
    {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "It is 4411.", "annotations": [], "logprobs": []}],
    },
    {"role": "user", "content": [{"type": "input_text", "text": "thanks \u00e9\u4f60"}], "n": 1.5},
]


async def test_items_round_trip_exactly(runtime: Runtime) -> None:
    session = BrainSession(runtime, "u1", "s1")
    assert isinstance(session, agents.memory.Session)
    assert await session.get_items() == []
    await session.add_items(ITEMS[:3])
    await session.add_items(ITEMS[3:])
    assert await session.get_items() == ITEMS
    assert await session.get_items(limit=2) == ITEMS[-2:]
    assert await BrainSession(runtime, "u1", "s1").get_items(limit=100) == ITEMS  # a new object, same chat
    assert await BrainSession(runtime, "u2", "s1").get_items() == []  # another user's chat
    assert await session.pop_item() == ITEMS[-1]
    assert await session.get_items() == ITEMS[:-1]
    assert await session.get_items(limit=1) == [ITEMS[-2]]
    await session.clear_session()
    assert await session.get_items() == []
    assert await session.pop_item() is None


async def test_bad_items_are_input_errors_and_write_nothing(runtime: Runtime) -> None:
    session = BrainSession(runtime, "u1", "s2")
    with pytest.raises(InputError, match="JSON"):
        await session.add_items([ITEMS[0], {"role": "user", "content": object()}])  # type: ignore[list-item]
    assert await session.get_items() == []
    with pytest.raises(InputError):
        BrainSession(runtime, "", "s")


async def test_runner_keeps_history_and_searches_memory(
    runtime: Runtime, openai_server: ScriptedOpenAIServer
) -> None:
    assert runtime.tiers is not None
    await runtime.tiers.archival("u1").add(IndexedDoc(id="p1", text="The locker code is 4411."))
    openai_server.script(
        Chat(
            content=None,
            tool_calls=(("search_memory", {"query": "locker code"}),),
            finish_reason="tool_calls",
        ),
        Chat("It is 4411."),
        Chat("You asked about your locker."),
    )
    client = AsyncOpenAI(base_url=openai_server.url, api_key="k", max_retries=0)
    model = agents.OpenAIChatCompletionsModel(model="scripted", openai_client=client)
    agent = agents.Agent(name="helper", model=model, tools=[memory_search_tool(runtime, "u1")])
    config = agents.RunConfig(tracing_disabled=True)
    session = BrainSession(runtime, "u1", "chat")
    first = await agents.Runner.run(agent, "what is my locker code?", session=session, run_config=config)
    assert first.final_output == "It is 4411."
    tool_output = json.loads(openai_server.chat_requests()[1].body["messages"][-1]["content"])
    assert tool_output[0]["text"] == "The locker code is 4411."
    items = await session.get_items()
    assert [i.get("type", "message") for i in items] == [
        "message",
        "function_call",
        "function_call_output",
        "message",
    ]
    second = await agents.Runner.run(agent, "what did I ask?", session=session, run_config=config)
    assert second.final_output == "You asked about your locker."
    sent = openai_server.chat_requests()[2].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "assistant", "user"]
    assert len(await session.get_items()) == 6
    await client.close()
