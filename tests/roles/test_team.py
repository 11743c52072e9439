"""Roles, routing, react modes and teams with a scripted model."""

from __future__ import annotations

import pytest

from actions.prompt import PromptAction
from brain import LLMError, Message
from brain.testing import ScriptedLLM
from roles.environment import Environment, Team
from roles.role import Role, parse_choice


def writer_and_reviewer(llm: ScriptedLLM) -> list[Role]:
    writer = Role(
        llm=llm,
        name="Writer",
        profile="A writer",
        actions=[PromptAction("Write", "Write a haiku.")],
        watch=["UserRequirement"],
    )
    reviewer = Role(
        llm=llm,
        name="Reviewer",
        profile="A critic",
        actions=[PromptAction("Review", "Review the draft in one sentence.")],
        watch=["Write"],
    )
    return [writer, reviewer]


async def test_two_role_pipeline_runs_its_rounds_and_stops_when_idle() -> None:
    llm = ScriptedLLM(["Autumn moon rises", "Lovely imagery."])
    team = Team()
    team.hire(writer_and_reviewer(llm))
    result = await team.run("A haiku about autumn", n_round=10)
    assert result.stop_reason == "idle" and result.rounds == 2
    assert [(m.sent_from, m.cause_by, m.content) for m in result.history] == [
        ("Human", "UserRequirement", "A haiku about autumn"),
        ("Writer", "Write", "Autumn moon rises"),
        ("Reviewer", "Review", "Lovely imagery."),
    ]
    assert "Human: A haiku about autumn" in llm.calls[0].prompt_text
    assert "Writer: Autumn moon rises" in llm.calls[1].prompt_text
    assert "Your task now: Review the draft" in llm.calls[1].prompt_text
    llm.assert_consumed()


async def test_budget_stop_has_a_clear_message() -> None:
    llm = ScriptedLLM(["draft " * 50, "review"])
    team = Team(budget_tokens=10)
    team.hire(writer_and_reviewer(llm))
    result = await team.run("Write", n_round=5)
    assert result.stop_reason == "budget" and result.rounds == 1
    assert result.message.startswith("stopped: token budget of 10 spent (")
    assert llm.remaining == 1  # the reviewer never ran


async def test_n_round_limit() -> None:
    llm = ScriptedLLM(["draft"])
    team = Team()
    team.hire(writer_and_reviewer(llm))
    result = await team.run("go", n_round=1)
    assert result.stop_reason == "n_round" and result.rounds == 1
    assert result.message == f"stopped after n_round=1 rounds with work left ({result.tokens_used} tokens)"


def test_routing_by_send_to_and_cause_by() -> None:
    env = Environment()
    a, b = (Role(llm=ScriptedLLM(), name=n, watch=["Write"]) for n in ("A", "B"))
    env.add_roles([a, b])
    env.publish_message(Message(content="to B only", cause_by="Other", send_to=("B",)))
    env.publish_message(Message(content="watched", cause_by="Write", sent_from="A"))
    assert [m.content for m in a.inbox] == [] and [m.content for m in b.inbox] == ["to B only", "watched"]
    with pytest.raises(ValueError, match="two roles"):
        env.add_roles([Role(llm=ScriptedLLM(), name="A")])


async def test_react_mode_lets_the_model_pick_actions() -> None:
    llm = ScriptedLLM(["1", "researched", "0", "written", "-1"])
    role = Role(
        llm=llm,
        name="Solo",
        react_mode="react",
        max_react_loop=5,
        actions=[PromptAction("Write", "write"), PromptAction("Research", "research")],
    )
    result = await role.run("Topic: owls")
    assert result is not None and result.content == "written"
    assert [m.cause_by for m in role.history[1:]] == ["Research", "Write"]
    assert "0: Write - write\n1: Research - research" in (llm.calls[0].messages[0].content or "")


def test_choice_parsing_is_strict() -> None:
    assert parse_choice(" 2.", 3) == 2 and parse_choice("-1", 3) == -1
    for bad in ("two", "3", "1 or 2", ""):
        with pytest.raises(LLMError):
            parse_choice(bad, 3)
