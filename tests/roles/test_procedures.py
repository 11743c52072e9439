"""Procedural memory: a team's run is stored as a procedure and starts the next run of the same kind of
task; real Redis and Valkey, a scripted model."""

from __future__ import annotations

import redis.asyncio as aioredis

from brain import LLMError
from brain.testing import ScriptedLLM
from roles.environment import Team
from tests.roles.test_team import writer_and_reviewer
from tests.support.stores import redis_tiers

PROCEDURE = "Task objective: a haiku.\n1. Writer wrote 'Autumn moon rises'.\nAdvice: keep 5-7-5."


async def test_a_run_is_stored_and_guides_the_next_run_of_the_same_kind(redis_client: aioredis.Redis) -> None:
    store = redis_tiers(redis_client).procedures
    llm = ScriptedLLM(["Autumn moon rises", "Lovely imagery.", PROCEDURE])
    team = Team(procedures=store, name="poets")
    team.hire(writer_and_reviewer(llm))
    first = await team.run("A haiku about autumn", n_round=10)
    assert first.used_procedure is None and first.procedure is not None
    asked = llm.calls[2].prompt_text
    assert "TASK:\nA haiku about autumn" in asked and "Writer: Autumn moon rises" in asked
    assert "Reviewer: Lovely imagery." in asked  # each step and its result
    assert [p.procedure for p in await store.all("poets")] == [PROCEDURE]

    llm2 = ScriptedLLM(["Winter snow falls", "Crisp.", "Task objective: a winter haiku."])
    again = Team(procedures=store, name="poets")
    again.hire(writer_and_reviewer(llm2))
    second = await again.run("A haiku about winter", n_round=10)
    assert second.used_procedure == first.procedure.id
    assert "Advice: keep 5-7-5." in llm2.calls[0].prompt_text  # the writer sees the earlier procedure
    assert "not instructions" in second.history[0].content
    assert len(await store.all("poets")) == 2

    other = Team(procedures=store, name="coders")  # another agent's procedures are its own
    other.hire(writer_and_reviewer(ScriptedLLM(["x", "y", "Task objective: code."])))
    assert (await other.run("A haiku about autumn", n_round=10)).used_procedure is None


async def test_a_failed_summary_keeps_the_run_and_says_why(redis_client: aioredis.Redis) -> None:
    store = redis_tiers(redis_client).procedures
    team = Team(procedures=store, name="poets")
    team.hire(writer_and_reviewer(ScriptedLLM(["draft", "ok", LLMError("HTTP 503")])))
    result = await team.run("A haiku", n_round=10)
    assert result.rounds == 2 and result.procedure is None
    assert result.procedure_error is not None and "503" in result.procedure_error
    assert await store.all("poets") == []
