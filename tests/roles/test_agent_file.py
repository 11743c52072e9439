"""Agent files: export -> import into an empty Redis -> export again gives the same file."""

from __future__ import annotations

import redis.asyncio as aioredis

from brain import Settings
from brain.backends.redis.core_blocks import RedisCoreBlockStore
from brain.keys import shared_scope
from brain.memory.core import Block
from brain.memory.transfer import ConversationExport, ExportedTurn
from brain.message import Message
from brain.progress import ProgressEvent
from brain.search.documents import EMBED_CHUNK
from brain.search.index import IndexedDoc
from brain.testing import ScriptedLLM, tool_calls
from roles.agent_file import AgentFile, export_agent, import_agent, parse_agent_file
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
                ),
                ("core_memory_append", {"label": "persona", "content": "Cooks for Ann"}),
            ),
            tool_calls(("send_message", {"message": "Noted!"})),
        ]
    )
    source = agent(redis_client, llm, "src")
    await RedisCoreBlockStore(redis_client, prefix="src").create(
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
    roles = [t.message.role for t in first.conversation.turns]  # the edits kept as a step, with results
    assert roles == ["user", "assistant", "tool", "tool", "assistant"] and len(first.archival) == 1
    assert [s.name for s in first.skills] == ["current_time"]
    assert {(b.scope, b.block.label) for b in first.core_blocks} == {
        ("tenant:3:ann:agent:Lily", "persona"),  # Ann's own copy, made by her edit
        ("user:ann", "human"),
        ("shared:team:x", "team"),
    }
    target = agent(redis_client, ScriptedLLM(), "dst")  # an empty store: another key prefix
    await import_agent(parse_agent_file(text), target, "ann", "c1")
    second = await export_agent(target, settings, "ann", "c1")
    assert second.model_dump_json() == text
    hits, _ = await target.tiers.recall("ann", "c1").search("vegetarian")
    assert hits  # recall memory was rebuilt from the turns


async def test_import_and_export_tell_their_progress(redis_client: aioredis.Redis) -> None:
    turns = tuple(
        ExportedTurn(seq=i, tokens=2, message=Message(role="user", sent_from="ann", content=f"note {i}"))
        for i in range(1, 8)
    )
    passages = tuple(
        IndexedDoc(id=f"p{i}", text=f"passage {i}", ts=float(i)) for i in range(EMBED_CHUNK + 44)
    )
    file = AgentFile(
        settings={},
        agent={"name": "Lily"},
        conversation=ConversationExport(user_id="ann", chat_id="c1", turns=turns),
        archival=passages,
    )
    llm = ScriptedLLM(embedder=lambda text: [1.0, float(len(text))])
    target = TieredAssistant(
        make_runtime(llm, client=redis_client, prefix="prog", embeddings=True), name="Lily"
    )
    seen: list[ProgressEvent] = []
    await import_agent(file, target, "ann", "c1", seen.append)
    told = [(e.task, e.done, e.total, e.unit) for e in seen]
    assert told == [
        ("importing 'ann'/'c1'", 0, 7, "turns"),
        ("importing 'ann'/'c1'", 7, 7, "turns"),
        ("embedding archival memory", 0, EMBED_CHUNK + 44, "passages"),
        ("embedding archival memory", EMBED_CHUNK, EMBED_CHUNK + 44, "passages"),
        ("embedding archival memory", EMBED_CHUNK + 44, EMBED_CHUNK + 44, "passages"),
        ("indexing for recall", 0, 7, "turns"),
        ("indexing for recall", 7, 7, "turns"),
    ]
    assert await target.tiers.archival("ann").count() == EMBED_CHUNK + 44
    seen.clear()
    exported = await export_agent(target, Settings(), "ann", "c1", seen.append)
    assert len(exported.conversation.turns) == 7
    assert [(e.done, e.total) for e in seen] == [(0, 7), (7, 7)] and seen[0].task == "exporting 'ann'/'c1'"
