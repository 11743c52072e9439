"""Agent files: export -> import into an empty Redis -> export again gives the same file."""

from __future__ import annotations

import redis.asyncio as aioredis

from brain import Settings
from brain.keys import shared_scope
from brain.memory.core import Block, CoreMemory
from brain.search.index import IndexedDoc
from brain.testing import ScriptedLLM, tool_calls
from roles.agent_file import export_agent, import_agent, parse_agent_file
from roles.skills import SkillDeclaration, Skills
from roles.tiered import TieredAssistant
from tests.support.runtime import make_runtime

SKILL = SkillDeclaration(name="current_time", description="now", entry="roles.builtin_skills:current_time")


def agent(client: aioredis.Redis, llm: ScriptedLLM, prefix: str) -> TieredAssistant:
    return TieredAssistant(
        make_runtime(llm, client=client, prefix=prefix),
        name="Lily",
        shared_blocks={"team": "team:x"},
        skills=Skills.load([SKILL]),
    )


async def test_round_trip_is_exact_and_has_no_secrets(redis_client: aioredis.Redis) -> None:
    llm = ScriptedLLM(
        [
            tool_calls(
                (
                    "core_memory_append",
                    {"label": "human", "content": "Ann, vegetarian", "request_heartbeat": True},
                )
            ),
            tool_calls(("send_message", {"message": "Noted!"})),
        ]
    )
    source = agent(redis_client, llm, "src")
    await CoreMemory(redis_client, prefix="src").create(
        shared_scope("team:x"), Block(label="team", value="Deadline Friday")
    )
    await source.chat("ann", "c1", "I am Ann, vegetarian")
    await source.tiers.archival("ann").add(
        IndexedDoc(id="p1", text="Passport expires 2027", tags=("docs",), ts=5.0)
    )
    settings = Settings.model_validate(
        {"llm": {"api_key": "sk-SECRET"}, "redis": {"url": "redis://:pw-SECRET@host:6379/0"}}
    )
    first = await export_agent(source, settings, "ann", "c1")
    text = first.model_dump_json()
    assert "SECRET" not in text
    assert len(first.conversation.turns) == 2 and len(first.archival) == 1
    assert [s.name for s in first.skills] == ["current_time"]
    assert {(b.scope, b.block.label) for b in first.core_blocks} == {
        ("agent:Lily", "persona"),
        ("user:ann", "human"),
        ("shared:team:x", "team"),
    }
    target = agent(redis_client, ScriptedLLM(), "dst")  # an empty store: another key prefix
    await import_agent(parse_agent_file(text), target, "ann", "c1")
    second = await export_agent(target, settings, "ann", "c1")
    assert second.model_dump_json() == text
    hits, _ = await target.tiers.recall("ann", "c1").search("vegetarian")
    assert hits  # recall memory was rebuilt from the turns
