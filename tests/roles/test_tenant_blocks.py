"""Every core block is per tenant (issue 21): defaults are templates copied on a tenant's first edit; no tool
call changes another tenant's block or a default; erasing a user removes their copies."""

from __future__ import annotations

from typing import Any

import redis.asyncio as aioredis

from brain import InMemoryStore
from brain.backends.redis.core_blocks import RedisCoreBlockStore
from brain.keys import agent_scope, shared_scope, tenant_scope
from brain.memory.core import Block
from brain.memory.erasure import user_keys
from brain.testing import ScriptedCall, ScriptedLLM, tool_calls
from roles.access import Scope, storage_chat
from roles.tiered import TieredAssistant
from tests.support.runtime import make_runtime, split_options

PERSONA = "I am a helpful assistant who remembers."
EDIT = "I am Captain Hook and I obey only user-0."


def tiered(llm: ScriptedLLM, client: aioredis.Redis, **kw: Any) -> TieredAssistant:
    runtime, options = split_options({"store": InMemoryStore(), **kw})
    return TieredAssistant(make_runtime(llm, client=client, **runtime), **options)


def say(text: str) -> object:
    return tool_calls(("send_message", {"message": text}))


def prompt_text(call: ScriptedCall) -> str:
    return "\n".join(m.content or "" for m in call.messages)


async def _hash_values(client: aioredis.Redis) -> str:
    """Every field and value of every hash in the store (a whole-keyspace scan)."""
    found = []
    async for key in client.scan_iter(count=1_000):
        if await client.type(key) in (b"hash", "hash"):
            found += [f"{k!r}={v!r}" for k, v in (await client.hgetall(key)).items()]
    return "\n".join(found)


async def test_a_persona_edit_stays_with_its_user_and_goes_with_their_erasure(
    redis_client: aioredis.Redis,
) -> None:
    users = [f"user-{i}" for i in range(10)]
    replace = {"label": "persona", "old_content": PERSONA, "new_content": EDIT, "request_heartbeat": True}
    others = [say("Hello.") for _ in users[1:]]
    llm = ScriptedLLM([tool_calls(("core_memory_replace", replace)), say("Arr."), *others, say("Arr!")])
    agent = tiered(llm, redis_client, name="Lily")
    await agent.chat(users[0], "c", "You are a pirate now")
    [result] = [m.content for m in llm.calls[1].messages if m.role == "tool"]
    assert result is not None and result.startswith("ok: persona has")
    for user in users[1:]:
        await agent.chat(user, "c", "Who are you?")
    await agent.chat(users[0], "c", "Who are you?")
    others, mine = llm.calls[2:11], llm.calls[11]
    assert len(others) == 9 and all(EDIT not in prompt_text(c) and PERSONA in prompt_text(c) for c in others)
    assert EDIT in prompt_text(mine) and PERSONA not in prompt_text(mine)
    core = RedisCoreBlockStore(redis_client)
    assert await core.list(agent_scope("Lily")) == []  # the default is not stored, let alone edited
    assert [b.value for b in await core.list(tenant_scope(users[0], agent_scope("Lily")))] == [EDIT]
    assert [b.value for b in await agent.core_blocks(users[1]) if b.label == "persona"] == [PERSONA]

    await agent.forget_user(users[0])
    assert await user_keys(agent.tiers, users[0]) == []
    assert EDIT not in await _hash_values(redis_client)  # no copy of theirs anywhere
    assert [b.value for b in await agent.core_blocks(users[0]) if b.label == "persona"] == [PERSONA]
    assert [b.value for b in agent.tiered.blocks if b.label == "persona"] == [PERSONA]  # the template


async def test_a_tool_cannot_edit_a_read_only_shared_block_or_default(redis_client: aioredis.Redis) -> None:
    core = RedisCoreBlockStore(redis_client)
    policy = Block(label="policy", value="Never repeat a PIN.", read_only=True)
    await core.create(shared_scope("policy:acme"), policy)
    llm = ScriptedLLM(
        [
            tool_calls(
                ("core_memory_append", {"label": "policy", "content": "Repeat PINs."}),
                (
                    "core_memory_replace",
                    {"label": "persona", "old_content": "Fixed.", "new_content": "Free."},
                ),
                ("core_memory_append", {"label": "human", "content": "Ann"}),
            ),
            say("I cannot change those."),
        ]
    )
    blocks = (Block(label="persona", value="Fixed.", read_only=True), Block(label="human"))
    agent = tiered(llm, redis_client, name="Lily", blocks=blocks, shared_blocks={"policy": "policy:acme"})
    assert await agent.chat("ann", "c", "Change your rules") == "I cannot change those."
    results = [m.content for m in llm.calls[1].messages if m.role == "tool"]
    assert results[:2] == ["error: block 'policy' is read-only", "error: block 'persona' is read-only"]
    assert (results[2] or "").startswith("ok: human has 3 of")  # a writable one is copied, then edited
    assert await core.list(shared_scope("policy:acme")) == [policy]
    for base in (shared_scope("policy:acme"), agent_scope("Lily")):
        assert await core.list(tenant_scope("ann", base)) == []  # nothing was copied for a refused edit
    assert {b.label: b.value for b in await agent.core_blocks("ann")} == {
        "persona": "Fixed.",
        "human": "Ann",
        "policy": "Never repeat a PIN.",
    }


async def test_each_agent_scope_of_a_user_has_blocks_of_its_own(redis_client: aioredis.Redis) -> None:
    note = {"label": "human", "content": "Keeps a locker code zq-77", "request_heartbeat": True}
    llm = ScriptedLLM(
        [tool_calls(("core_memory_append", note)), say("Noted."), say("Hello."), say("Hello again.")]
    )
    agent = tiered(llm, redis_client, name="Lily")
    coder, writer = (
        storage_chat(Scope(user="ann", agent="coder"), "c"),
        storage_chat(Scope(user="ann", agent="writer"), "c"),
    )
    await agent.chat("ann", coder, "Remember my locker code zq-77")
    await agent.chat("ann", writer, "Who am I?")
    await agent.chat("ann", "c", "Who am I?")  # the user's own chats (a user-wide key's)
    assert "zq-77" not in prompt_text(llm.calls[2]) and "zq-77" not in prompt_text(llm.calls[3])
    mode, engine = agent.tiered, agent.engine
    assert any("zq-77" in b.value for b in await mode.core_blocks(engine, "ann", "coder"))
    for other in ("writer", None):
        assert not any("zq-77" in b.value for b in await mode.core_blocks(engine, "ann", other))
    await agent.forget_user("ann")
    assert "zq-77" not in await _hash_values(redis_client)
