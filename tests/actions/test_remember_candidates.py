"""Reconciliation at scale: what a new fact is reconciled with (by key, words and meaning, bounded in tokens),
duplicates merged with their sources, facts true from the turns' own times."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import redis.asyncio as aioredis

from actions.remember import remember
from brain.memory.fact_candidates import Candidate, Probe, bounded, duplicate_of, overlap
from brain.message import Message
from brain.settings import FactSettings
from brain.storage.facts import Fact, fact_key, fact_value
from brain.testing import ScriptedCall, ScriptedLLM
from tests.support.stores import redis_tiers


def said(*facts: tuple[str, str, str]) -> str:
    """An extraction reply: (text, key, value) per fact."""
    return json.dumps(
        {"facts": [{"text": t, "key": k, "value": v, "category": "personal"} for t, k, v in facts]},
        ensure_ascii=False,
    )


def turn(text: str, when: datetime | None = None) -> list[Message]:
    stamp = {"created_at": when} if when else {}
    return [
        Message(role="user", content=text, sent_from="user", **stamp),
        Message(role="assistant", content="Noted.", **stamp),
    ]


def existing(call: ScriptedCall) -> list[str]:
    text = (call.messages[1].content or "").split("NEW facts:")[0]
    return [m.group(1) for m in re.finditer(r"^\d+: (.+)$", text, re.M)]


def test_overlap_is_the_same_both_ways() -> None:
    a, b = "The user lives in Oslo", "Oslo is where the user has lived for years and loves it"
    assert overlap(a, b) == overlap(b, a) > 0
    assert overlap("用户住在北京", "北京是用户住的城市") == overlap("北京是用户住的城市", "用户住在北京") > 0
    assert overlap("tea", "") == 0


def test_keys_and_values_are_normalized() -> None:
    assert fact_key(" User.Favourite Drink ") == "user.favourite_drink"
    assert fact_key("用户.城市") == "用户.城市" and fact_key("a:b c") == "a_b_c" and fact_key("") == ""
    assert fact_value("The Green Tea.") == fact_value("green  tea") == "green tea"
    assert fact_value("绿茶。") == "绿茶"


def _held(text: str, key: str = "", value: str = "", cosine: float | None = None) -> Candidate:
    return Candidate(fact=Fact(text=text, key=key, value=value), score=1.0, cosine=cosine)


def test_a_duplicate_is_the_same_key_and_value_never_a_change() -> None:
    probe = Probe("Green tea is my favourite", "user.favourite_drink", "Green tea")
    same = _held("Loves green tea", "user.favourite_drink", "green tea.")
    other = _held("Loves coffee", "user.favourite_drink", "coffee", cosine=0.99)
    assert duplicate_of(probe, [other, same], None) is same.fact
    # a close embedding is no duplicate when the key says the value changed, nor without a threshold
    assert duplicate_of(probe, [other], 0.9) is None and duplicate_of(probe, [other], None) is None
    unkeyed = _held("Drinks green tea every morning", cosine=0.97)
    assert duplicate_of(Probe("Green tea every morning"), [unkeyed], 0.95) is unkeyed.fact


def test_the_shown_candidates_fit_the_budget_and_every_new_fact_gets_its_best() -> None:
    long = [_held(f"fact {i} " + "word " * 40) for i in range(30)]
    short = [_held("Lives in Oslo", "user.city", "Oslo")]
    shown = bounded([long, short], budget=100, count=lambda t: len(t.split()))
    assert long[0].fact in shown and short[0].fact in shown  # each list's first, whatever the budget
    assert sum(len(f.text.split()) + 4 for f in shown) <= 100 + len(long[0].fact.text.split()) + 4
    assert len(bounded([long], budget=10_000, count=lambda t: len(t.split()))) == 30


async def test_the_fact_to_replace_is_shown_however_it_was_worded(redis_client: aioredis.Redis) -> None:
    """The old value shares no word with the new fact and hides among facts that do: its key finds it."""
    store = redis_tiers(redis_client).facts
    noise = [
        (f"The user's friend number {i} moved to a new city", f"user.friend{i}.city", "x") for i in range(60)
    ]
    llm = ScriptedLLM([said(("Home is Oslo", "user.city", "Oslo"), *noise)])
    await remember(llm, store, "kay", turn("I live in Oslo; my friends all moved"))
    shown: list[list[str]] = []

    def reconcile(call: ScriptedCall) -> str:
        shown.append(existing(call))
        return json.dumps(
            {"memory": [{"event": "UPDATE", "id": "0", "text": "Moved to a new city: Bergen", "new": 0}]}
        )

    llm.add(said(("Moved to a new city: Bergen", "user.city", "Bergen")), reconcile)
    report = await remember(
        llm, store, "kay", turn("I moved to Bergen"), settings=FactSettings(candidate_tokens=200)
    )
    assert shown[0][0] == "Home is Oslo" and report.updated == 1
    current = {f.key: f.text for f in await store.all("kay")}
    assert current["user.city"] == "Moved to a new city: Bergen" and len(current) == 61


async def test_another_wording_merges_with_both_sources(redis_client: aioredis.Redis) -> None:
    store = redis_tiers(redis_client).facts
    first, again = turn("I love green tea"), turn("Green tea is my favourite drink")
    llm = ScriptedLLM(
        [
            said(("Loves green tea", "user.favourite_drink", "green tea")),
            said(("Green tea is the user's favourite drink", "User.Favourite_Drink", "Green tea.")),
        ]
    )
    await remember(llm, store, "lu", first)
    report = await remember(llm, store, "lu", again)
    assert (report.duplicates, report.added, report.calls) == (1, 0, 1)  # merged: no reconciliation call
    [fact] = await store.all("lu")
    assert fact.text == "Loves green tea" and fact.source_turns == tuple(m.id for m in first + again)
    assert [e.event for e in await store.history("lu")] == ["ADD", "MERGE"]
    # that wording again is known: no candidate search, no call beyond the extraction
    llm.add(said(("Green tea is the user's favourite drink", "user.favourite_drink", "green tea")))
    assert (await remember(llm, store, "lu", turn("Yes, green tea is my favourite"))).duplicates == 1
    llm.assert_consumed()


async def test_chinese_wordings_merge_and_a_changed_value_does_not(redis_client: aioredis.Redis) -> None:
    store = redis_tiers(redis_client).facts
    decided: list[list[str]] = []

    def reconcile(call: ScriptedCall) -> str:
        decided.append(existing(call))
        return json.dumps(
            {"memory": [{"event": "UPDATE", "id": "0", "text": "用户现在最喜欢喝咖啡", "new": 0}]}
        )

    llm = ScriptedLLM(
        [
            said(("用户最喜欢绿茶", "user.favourite_drink", "绿茶")),
            said(("绿茶是用户最爱喝的饮料", "user.favourite_drink", "绿茶。")),
            said(("用户现在最喜欢喝咖啡", "user.favourite_drink", "咖啡")),
            reconcile,
        ]
    )
    await remember(llm, store, "mei", turn("我最喜欢绿茶"))
    assert (await remember(llm, store, "mei", turn("绿茶是我最爱喝的"))).duplicates == 1
    report = await remember(llm, store, "mei", turn("我现在更喜欢咖啡"))
    assert report.updated == 1 and decided == [["用户最喜欢绿茶"]]
    assert [f.text for f in await store.all("mei")] == ["用户现在最喜欢喝咖啡"]


async def test_wordings_of_one_fact_in_one_batch_become_one_fact(redis_client: aioredis.Redis) -> None:
    store = redis_tiers(redis_client).facts
    turns = turn("I'm a nurse") + turn("Nursing is my job")
    llm = ScriptedLLM(
        [said(("Works as a nurse", "user.job", "nurse"), ("Is a nurse by profession", "user.job", "Nurse"))]
    )
    report = await remember(llm, store, "ned", turns)
    [fact] = await store.all("ned")
    assert (report.added, report.duplicates) == (1, 1) and fact.text == "Works as a nurse"
    assert await store.by_hash("ned", [fact.hash]) and [e.event for e in await store.history("ned")] == [
        "ADD",
        "MERGE",
    ]


async def test_facts_hold_from_the_turns_own_time(redis_client: aioredis.Redis) -> None:
    store = redis_tiers(redis_client).facts
    march, june = datetime(2024, 3, 1, 9, 30, tzinfo=UTC), datetime(2024, 6, 2, 18, 0, tzinfo=UTC)

    def update(call: ScriptedCall) -> str:
        return json.dumps({"memory": [{"event": "UPDATE", "id": "0", "text": "Lives in Bergen", "new": 0}]})

    llm = ScriptedLLM(
        [
            said(("Lives in Oslo", "user.city", "Oslo")),
            json.dumps(
                {
                    "facts": [
                        {
                            "text": "Lives in Bergen",
                            "key": "user.city",
                            "value": "Bergen",
                            "valid_at": "2024-06-01",
                        }
                    ]
                }
            ),
            update,
        ]
    )
    await remember(llm, store, "ola", turn("I live in Oslo", march))
    await remember(llm, store, "ola", turn("I moved to Bergen yesterday", june))
    assert "[2024-03-01 09:30]\nUser: I live in Oslo" in (llm.calls[0].messages[1].content or "")
    assert "2024-06-02" in (llm.calls[1].messages[0].content or "")  # today is the turn's day
    old, new = sorted(await store.all("ola", current_only=False), key=lambda f: f.valid_at or 0)
    assert old.valid_at == march.timestamp()  # the model named no time: the turn's
    assert new.valid_at == datetime(2024, 6, 1, tzinfo=UTC).timestamp() == old.invalid_at
    may = datetime(2024, 5, 1, tzinfo=UTC).timestamp()
    assert [f.text for f in await store.search("ola", "lives", as_of=may)] == ["Lives in Oslo"]
