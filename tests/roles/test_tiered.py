"""The tiered (MemGPT) mode: every memory tool through the scripted model, heartbeats, limits, isolation."""

from __future__ import annotations

import json
from typing import Any

import pytest
import redis.asyncio as aioredis

from brain import InMemoryStore, LLMError, LLMSettings, MemorySettings, OpenAILLM
from brain.backends.redis.core_blocks import RedisCoreBlockStore
from brain.keys import archival_base, shared_scope
from brain.memory.core import Block
from brain.testing import ScriptedLLM, obey_word_limit, tool_calls
from roles.tiered import TieredAssistant
from tests.support.openai_server import Chat, ScriptedOpenAIServer
from tests.support.prompts import memory_section, search_results
from tests.support.runtime import make_runtime, split_options
from tests.support.stores import redis_index


def tiered(llm: ScriptedLLM, client: aioredis.Redis, **kw: Any) -> TieredAssistant:
    runtime, options = split_options({"store": InMemoryStore(), **kw})
    return TieredAssistant(make_runtime(llm, client=client, **runtime), **options)


def say(text: str) -> object:
    return tool_calls(("send_message", {"message": text}))


async def test_core_memory_edit_with_heartbeat_and_stable_prefix(redis_client: aioredis.Redis) -> None:
    llm = ScriptedLLM(
        [
            tool_calls(
                ("core_memory_append", {"label": "human", "content": "Name: Ann", "request_heartbeat": True})
            ),
            say("Nice to meet you, Ann!"),
            say("You are Ann."),
        ]
    )
    agent = tiered(llm, redis_client)
    assert await agent.chat("u1", "c", "I am Ann") == "Nice to meet you, Ann!"
    assert await agent.chat("u1", "c", "Who am I?") == "You are Ann."
    first, second, third = llm.calls
    heads = [(c.messages[0].content or "").split("\n<memory>\n")[0] for c in llm.calls]
    assert heads[0] == heads[1] == heads[2]  # the system prompt before the memory section never changes
    assert "Name: Ann" not in memory_section(first.messages)
    human = (
        '<item kind="core block human (what you know about the user)" source="assistant turn (memory tools) '
        'or API write" trust="lower">\nName: Ann\n</item>'
    )
    assert human in memory_section(second.messages)
    assert "Name: Ann" in memory_section(third.messages)
    assert {t.name for t in first.tools} >= {"send_message", "core_memory_append", "conversation_search_date"}
    [human] = [b for b in await RedisCoreBlockStore(redis_client).list("user:u1") if b.label == "human"]
    assert human.value == "Name: Ann"


async def test_limit_enforced_with_room_left(redis_client: aioredis.Redis) -> None:
    llm = ScriptedLLM(
        [
            tool_calls(("core_memory_append", {"label": "human", "content": "x" * 50})),
            say("I could not save all of that."),
        ]
    )
    agent = tiered(
        llm, redis_client, blocks=(Block(label="persona", value="p"), Block(label="human", limit=20))
    )
    assert await agent.chat("u2", "c", "remember a lot") == "I could not save all of that."
    [result] = [m.content for m in llm.calls[1].messages if m.role == "tool"]
    assert result is not None and result.startswith("error: block 'human' holds at most 20 characters")
    assert "(20 characters of room left)" in result  # a failed tool call earns another step


async def test_archival_insert_and_search_and_conversation_search(redis_client: aioredis.Redis) -> None:
    llm = ScriptedLLM(
        [
            tool_calls(
                (
                    "archival_memory_insert",
                    {
                        "content": "Ann's passport expires in 2027",
                        "tags": ["docs"],
                        "request_heartbeat": True,
                    },
                )
            ),
            say("Saved."),
            tool_calls(
                ("archival_memory_search", {"query": "passport", "tags": ["docs"], "request_heartbeat": True})
            ),
            say("It expires in 2027."),
            tool_calls(("conversation_search", {"query": "passport", "request_heartbeat": True})),
            tool_calls(
                (
                    "conversation_search_date",
                    {"start_date": "2000-01-01", "end_date": "2100-01-01", "request_heartbeat": True},
                )
            ),
            say("You asked about it before."),
        ]
    )
    rewrites = ScriptedLLM([json.dumps({"related": True, "rewritten": "Did I mention my passport?"})])
    agent = tiered(llm, redis_client, memory_llm=rewrites)
    await agent.chat("u3", "c", "Note my passport expiry")
    assert await agent.chat("u3", "c", "When does my passport expire?") == "It expires in 2027."
    found = search_results(llm.calls[3].messages)[-1]
    [note] = [m.content for m in llm.calls[3].messages if m.role == "tool"][-1:]
    assert note == (
        'archival_memory_search: the result is in the memory section of the system message, item "search '
        'result 1 (archival_memory_search)".'
    )
    assert found["total"] == 1 and found["results"][0]["text"] == "Ann's passport expires in 2027"
    assert found["results"][0]["tags"] == ["docs"]
    await agent.chat("u3", "c", "Did I mention it?")  # rewritten on the memory model, answered as asked
    assert len(rewrites.calls) == 1 and "Did I mention my passport?" in (
        llm.calls[4].messages[-1].content or ""
    )
    recall = search_results(llm.calls[5].messages)[-1]
    assert recall["total"] >= 2 and any(
        r["text"] == "User: Note my passport expiry" for r in recall["results"]
    )
    by_date = search_results(llm.calls[6].messages)[-1]
    assert by_date["total"] == 8 and by_date["pages"] == 2  # each turn: question, tool step, result, answer


async def test_heartbeat_chain_is_capped(redis_client: aioredis.Redis) -> None:
    loop = tool_calls(("conversation_search", {"query": "x", "request_heartbeat": True}))
    llm = ScriptedLLM([loop, loop, loop, "Final answer without tools."])
    agent = tiered(llm, redis_client, memory_settings=MemorySettings(max_tool_steps=3))
    assert await agent.chat("u4", "c", "go") == "Final answer without tools."
    assert [bool(c.tools) for c in llm.calls] == [True, True, True, False]


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (
            ("core_memory_append", {"label": "diary", "content": "x"}),
            "error: there is no core memory block 'diary'",
        ),
        (
            ("core_memory_replace", {"label": "human", "old_content": "zzz", "new_content": "y"}),
            "was not found",
        ),
        (("archival_memory_search", {"query": "x", "start_date": "yesterday"}), "is not an ISO date"),
        (("archival_memory_insert", {"tags": ["a"]}), "missing required argument(s): content"),
        (("send_message", {"message": "hi", "mood": "happy"}), "unknown argument 'mood'"),
        (("teleport", {}), "error: there is no skill named 'teleport'"),
    ],
)
async def test_bad_tool_calls_become_tool_errors(
    redis_client: aioredis.Redis, call: tuple[str, dict[str, object]], error: str
) -> None:
    llm = ScriptedLLM([tool_calls(call), say("Sorry.")])
    reply = await tiered(llm, redis_client).chat("u5", "c", "do it")
    # A message already streamed to the user stays said, even when its call had a bad argument.
    assert reply == ("hi\n\nSorry." if call[0] == "send_message" else "Sorry.")
    assert error in (next(m.content for m in llm.calls[1].messages if m.role == "tool") or "")


async def test_a_step_that_says_nothing_to_the_user_is_followed_by_another(
    redis_client: aioredis.Redis,
) -> None:
    llm = ScriptedLLM([tool_calls(("conversation_search", {"query": "x"})), say("Hello!")])
    assert await tiered(llm, redis_client).chat("u6", "c", "hello") == "Hello!"
    assert [m.role for m in llm.calls[1].messages[-2:]] == ["assistant", "tool"]


async def test_no_message_to_the_user_is_an_error_and_changes_nothing(redis_client: aioredis.Redis) -> None:
    search = tool_calls(("conversation_search", {"query": "x"}))
    llm = ScriptedLLM([search, search, search, LLMError("the model failed")])
    agent = tiered(llm, redis_client, memory_settings=MemorySettings(max_tool_steps=3))
    with pytest.raises(LLMError, match="the model failed"):
        await agent.chat("u6", "c", "hello")
    assert [bool(c.tools) for c in llm.calls] == [True, True, True, False]  # the last step offers no tools
    memory = await agent.memory_of("u6", "c")
    assert memory.history == [] and memory.last_talk == "hello"


async def test_tenants_cannot_see_each_other(redis_client: aioredis.Redis) -> None:
    llm = ScriptedLLM(
        [
            tool_calls(
                ("archival_memory_insert", {"content": "alice bank pin 1234", "request_heartbeat": True})
            ),
            say("ok"),
            tool_calls(("archival_memory_search", {"query": "bank pin", "request_heartbeat": True})),
            say("nothing"),
        ]
    )
    agent = tiered(llm, redis_client)
    await agent.chat("alice", "c", "store my pin")
    await agent.chat("bob", "c", "what is alice's pin?")
    found = search_results(llm.calls[3].messages)[-1]
    assert found["total"] == 0
    assert (await redis_index(redis_client, archival_base("brain", "alice")).search("pin"))[1] == 1
    assert (await redis_index(redis_client, archival_base("brain", "bob")).search("pin"))[1] == 0


async def test_shared_block_between_two_agents_of_one_user(redis_client: aioredis.Redis) -> None:
    core = RedisCoreBlockStore(redis_client)
    await core.create(shared_scope("team:research"), Block(label="team", value="Deadline: Friday", limit=200))
    llm = ScriptedLLM(
        [
            tool_calls(
                ("core_memory_append", {"label": "team", "content": "Owner: Bea", "request_heartbeat": True})
            ),
            say("ok"),
            say("noted"),
            say("no owner yet"),
        ]
    )
    writer = tiered(llm, redis_client, shared_blocks={"team": "team:research"}, name="Writer")
    editor = tiered(llm, redis_client, shared_blocks={"team": "team:research"}, name="Editor")
    await writer.chat("u7", "c", "Bea owns it")
    await editor.chat("u7", "c2", "who owns it?")
    await editor.chat("u8", "c", "who owns it?")
    assert "Deadline: Friday\nOwner: Bea" in memory_section(llm.calls[2].messages)  # u7's copy
    assert "Deadline: Friday\n</item>" in memory_section(llm.calls[3].messages)  # u8: the seed
    assert [b.value for b in await core.list(shared_scope("team:research"))] == ["Deadline: Friday"]


async def test_pressure_note_and_the_prompt_always_fits(redis_client: aioredis.Redis) -> None:
    llm = ScriptedLLM([say(f"answer {i}") for i in range(12)])
    settings = MemorySettings(
        pressure_share=0.5, prompt_history_share=0.9, reply_tokens=64, summarize_share=1.0
    )
    agent = tiered(
        llm,
        redis_client,
        context_window=600,
        memory_settings=settings,
        memory_llm=ScriptedLLM([obey_word_limit] * 20),
    )
    for i in range(12):
        await agent.chat("u9", "c", f"message {i} " + "filler words " * 20)
    from brain.memory.context import is_well_formed, prompt_tokens

    assert all(prompt_tokens(c.messages, agent.tokenizer) <= 600 - 64 for c in llm.calls)
    assert all(is_well_formed(c.messages) for c in llm.calls)
    warned = [any("Memory pressure" in (m.content or "") for m in c.messages) for c in llm.calls]
    assert any(warned)  # once the chat passed half the window (later its turns are summarized away)
    quiet = [c for c, w in zip(llm.calls, warned, strict=True) if not w]
    assert all(prompt_tokens(c.messages, agent.tokenizer) <= 300 for c in quiet)


async def test_hybrid_search_when_embeddings_are_configured(redis_client: aioredis.Redis) -> None:
    def embed(text: str) -> list[float]:  # a toy embedding: travel words point one way, money the other
        travel = sum(w in text.lower() for w in ("trip", "flight", "journey", "oslo"))
        money = sum(w in text.lower() for w in ("salary", "bank", "pin"))
        return [float(travel), float(money), 0.1]

    llm = ScriptedLLM(
        [
            tool_calls(
                ("archival_memory_insert", {"content": "Flight to Oslo on May 3", "request_heartbeat": True})
            ),
            say("saved"),
            tool_calls(("archival_memory_search", {"query": "journey", "request_heartbeat": True})),
            say("found it"),
        ],
        embedder=embed,
    )
    agent = tiered(llm, redis_client, embeddings=True)
    await agent.chat("u10", "c", "remember my flight")
    await agent.chat("u10", "c", "when is my journey?")
    last_chat = [c for c in llm.calls if c.kind != "embed"][-1]
    found = search_results(last_chat.messages)[-1]
    assert found["results"][0]["text"] == "Flight to Oslo on May 3"  # no shared word: found by its vector
    assert [c.kind for c in llm.calls].count("embed") >= 3


async def test_conversation_search_by_role(redis_client: aioredis.Redis) -> None:
    llm = ScriptedLLM(
        [
            say("Oslo is lovely in May."),
            tool_calls(
                ("conversation_search", {"query": "Oslo", "role": "assistant", "request_heartbeat": True})
            ),
            say("I said it was lovely."),
        ]
    )
    agent = tiered(llm, redis_client)
    await agent.chat("u11", "c", "Tell me about Oslo")
    await agent.chat("u11", "c", "What did you say about Oslo?")
    found = search_results(llm.calls[-1].messages)[-1]
    assert [r["text"] for r in found["results"]] == ["Lily: Oslo is lovely in May."]


async def test_turns_from_brain_mode_become_searchable(redis_client: aioredis.Redis) -> None:
    from roles.assistant import Assistant

    store = InMemoryStore()
    plain = Assistant(make_runtime(ScriptedLLM(["Lisbon is sunny."]), store=store))
    await plain.chat("u12", "c", "Tell me about Lisbon")
    llm = ScriptedLLM(
        [
            tool_calls(("conversation_search", {"query": "Lisbon", "request_heartbeat": True})),
            say("We talked about Lisbon."),
        ]
    )
    agent = TieredAssistant(make_runtime(llm, store=store, client=redis_client))
    await agent.chat("u12", "c", "What did we discuss?")
    found = search_results(llm.calls[-1].messages)[-1]
    assert {r["text"] for r in found["results"]} >= {"User: Tell me about Lisbon", "Lily: Lisbon is sunny."}


async def test_summarizes_before_the_prompt_would_overflow(redis_client: aioredis.Redis) -> None:
    settings = MemorySettings(summarize_share=1.0, keep_recent_share=0.1, reply_tokens=100)
    memory_llm = ScriptedLLM([obey_word_limit] * 10)
    llm = ScriptedLLM([say(f"answer {i} " + "padding " * 40) for i in range(10)])
    agent = tiered(llm, redis_client, context_window=1_200, memory_settings=settings, memory_llm=memory_llm)
    for i in range(10):
        await agent.chat("u13", "c", f"question {i} " + "words " * 40)
    assert memory_llm.calls  # the budget share alone (1.0) would never have asked
    memory = await agent.memory_of("u13", "c")
    assert memory.historical_summary and memory.summary_upto > 0


async def test_taken_back_turns_leave_recall_memory(redis_client: aioredis.Redis) -> None:
    from io import StringIO

    from roles.cli.session import ChatSession

    agent = tiered(ScriptedLLM([say("Secret plan noted.")]), redis_client)
    out = StringIO()
    session = ChatSession(agent, "u14", "c", out, confirm=lambda _: True)
    await session.handle("my secret plan")
    recall = agent.tiers.recall("u14", "c")
    assert (await recall.search("secret plan"))[1] == 2
    await session.handle("/pop 2")
    assert (await recall.search("secret plan"))[1] == 0
    assert "took back 2 turn(s)" in out.getvalue()


async def test_send_message_streams_through_the_openai_client(
    redis_client: aioredis.Redis, openai_server: ScriptedOpenAIServer
) -> None:
    message = "Guten Tag, Ann! 你好，今天去奥斯陆吗？"
    openai_server.script(Chat(tool_calls=(("send_message", {"message": message}),)))
    async with OpenAILLM.from_settings(LLMSettings(base_url=openai_server.url, api_key="sk-test")) as llm:
        agent = TieredAssistant(make_runtime(llm, client=redis_client))
        got = [piece async for piece in agent.chat_stream("u15", "c", "Hallo")]
    assert "".join(got) == message and len(got) > 3  # it arrived piece by piece
    memory = await agent.memory_of("u15", "c")
    assert memory.history[-1].content == message
