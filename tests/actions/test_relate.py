"""IsRelated / Rewrite: strict parsing, the lexical pre-check, the user text sent once."""

from __future__ import annotations

import pytest

from actions.relate import (
    clearly_unrelated,
    is_related,
    parse_relate_and_rewrite,
    parse_verdict,
    relate_and_rewrite,
    rewrite,
)
from brain import LLMError
from brain.testing import ScriptedLLM

CONTEXT = "User: I am planning a trip to Oslo in May.\nAssistant: Oslo in May is lovely."


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [("TRUE", True), ("FALSE", False), (" true.\n", True), ('"False"', False), ("**TRUE**", True)],
)
def test_verdicts(reply: str, verdict: bool) -> None:
    assert parse_verdict(reply) is verdict


@pytest.mark.parametrize("reply", ["NOT TRUE", "FALSE (it would be TRUE if ...)", "yes", "", "TRUE FALSE"])
def test_anything_else_is_an_error(reply: str) -> None:
    with pytest.raises(LLMError, match="expected TRUE or FALSE"):
        parse_verdict(reply)


def test_combined_reply_parsing() -> None:
    assert parse_relate_and_rewrite('{"related": false, "rewritten": null}') == (False, None)
    assert parse_relate_and_rewrite('```json\n{"related": true, "rewritten": "Book Oslo hotels"}\n```') == (
        True,
        "Book Oslo hotels",
    )
    for bad in (
        "TRUE",
        '{"related": "yes"}',
        '{"related": true}',
        "[1]",
        '{"related": true, "rewritten": " "}',
    ):
        with pytest.raises(LLMError):
            parse_relate_and_rewrite(bad)


def test_lexical_precheck() -> None:
    assert clearly_unrelated(CONTEXT, "What is the boiling point of water?")
    assert clearly_unrelated("", "book it")
    assert not clearly_unrelated(CONTEXT, "Book hotels there for me")  # points back
    assert not clearly_unrelated(CONTEXT, "Which museums in Oslo are open?")  # shares a content word


async def test_clearly_unrelated_skips_the_llm() -> None:
    llm = ScriptedLLM()  # any call would fail: the script is empty
    assert await is_related(llm, CONTEXT, "What is the boiling point of water?") is False
    assert await relate_and_rewrite(llm, "What is the boiling point of water?", CONTEXT) == (
        "What is the boiling point of water?"
    )
    assert llm.calls == []


async def test_related_sends_the_user_text_once() -> None:
    llm = ScriptedLLM(["TRUE", "Book hotels in Oslo for May for me"])
    text = "Book hotels there for me"
    assert await is_related(llm, CONTEXT, text)
    rewritten = await rewrite(llm, text, CONTEXT)
    assert rewritten == "Book hotels in Oslo for May for me"  # not "{merged} {text}" (MetaGPT W18)
    for call in llm.calls:
        assert call.prompt_text.count(text) == 1


async def test_one_combined_call() -> None:
    llm = ScriptedLLM(['{"related": true, "rewritten": "Book hotels in Oslo"}', '{"related": false}'])
    assert await relate_and_rewrite(llm, "Book hotels there", CONTEXT) == "Book hotels in Oslo"
    assert await relate_and_rewrite(llm, "Is it far?", CONTEXT) == "Is it far?"
    assert len(llm.calls) == 2 and all(c.prompt_text.count("Book hotels there") <= 1 for c in llm.calls)


async def test_garbage_verdict_from_the_model_is_an_error() -> None:
    with pytest.raises(LLMError):
        await is_related(ScriptedLLM(["NOT TRUE"]), CONTEXT, "Is it warm there?")


async def test_as_role_actions() -> None:
    from actions import ActionContext, IsRelated, Persona, RelateAndRewrite, Rewrite, Summarize
    from brain import Message

    context = ActionContext(
        persona=Persona(),
        messages=(
            Message(content="I am planning a trip to Oslo in May.", sent_from="User"),
            Message(content="Book hotels there", sent_from="User"),
        ),
    )
    llm = ScriptedLLM(
        [
            "TRUE",
            "Book hotels in Oslo",
            '{"related": true, "rewritten": "Book Oslo hotels"}',
            "User plans Oslo in May and wants hotels.",
        ]
    )
    assert await IsRelated().run(llm, context) == "TRUE"
    assert await Rewrite().run(llm, context) == "Book hotels in Oslo"
    assert await RelateAndRewrite().run(llm, context) == "Book Oslo hotels"
    assert await Summarize(max_words=30).run(llm, context) == "User plans Oslo in May and wants hotels."
    assert "at most 30 words" in (llm.calls[-1].messages[0].content or "")
    assert "User: I am planning a trip to Oslo in May." in llm.calls[-1].prompt_text
