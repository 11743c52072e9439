"""IsRelated / Rewrite: strict parsing, the lexical pre-check, the user text sent once."""

from __future__ import annotations

import pytest

from actions.pointers import faithful
from actions.relate import (
    clearly_unrelated,
    is_related,
    may_refer,
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


@pytest.mark.parametrize(
    "text",
    [
        "Book hotels there for me",
        "Is it far?",
        "And tomorrow?",
        "What about Bergen?",
        "Why?",
        "帮我在那里订酒店",
        "它贵吗？",
        "那明天呢？",
        "为什么？",
        "真不错，再多说说。",
    ],
)
def test_may_refer(text: str) -> None:
    assert may_refer(CONTEXT, text)
    assert not may_refer("", text)  # nothing to point back at


@pytest.mark.parametrize(
    "text",
    ["What is the boiling point of water?", "Recommend a novel about the sea.", "Hello!", "水的沸点是多少？"],
)
def test_may_not_refer(text: str) -> None:
    assert not may_refer(CONTEXT, text)


def test_chinese_shared_words_are_content_words() -> None:
    assert not clearly_unrelated("我下周去奥斯陆旅行。", "奥斯陆的博物馆几点开门？")
    assert clearly_unrelated("我下周去奥斯陆旅行。", "水的沸点是多少度？")


@pytest.mark.parametrize(
    "text",
    [
        "I cleaned the whole apartment today, it took forever.",  # "it" inside its own message
        "Did you see the news about space travel? Everyone at the office talks about it.",
        "My neighbour's cat kept barking last night, I hardly slept.",  # time words are not pointers
        "I had pizza for lunch again, I should try something new.",
        "这一周天气一直下雨，我几乎没出门。",  # 这周: this week
        "我午饭又吃了饺子，该换点新花样了。",  # 该: should
        "王强是先做候鸟迁徙讲座，还是先看杜松之王演唱会？",  # 还是: or
        "今天我带侄子去了天文馆，他特别喜欢恐龙。",
    ],
)
def test_what_a_message_says_of_itself_does_not_point_back(text: str) -> None:
    assert not may_refer(CONTEXT, text)


def test_a_rewrite_must_be_faithful() -> None:
    assert faithful("Book hotels in Oslo for me", "Book hotels there for me", CONTEXT)
    assert faithful("帮我在奥斯陆订酒店", "帮我在那里订酒店", "User: 我下周五飞奥斯陆。")
    assert not faithful("...", "Book hotels there for me", CONTEXT)
    assert not faithful("I bought a new laptop in May 2022", "When was that?", CONTEXT)


async def test_an_invented_rewrite_is_not_used() -> None:
    invented = '{"related": true, "rewritten": "I bought a laptop in Berlin for 900 euros"}'
    llm = ScriptedLLM([invented])
    assert await relate_and_rewrite(llm, "When was that?", CONTEXT) == "When was that?"
