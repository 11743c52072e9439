"""Conversation records cost what they should (issue 30): turn records without default fields, 32-hex ids
packed in the ids hash, the pending text out of the meta hash; what older versions wrote reads the same."""

from __future__ import annotations

import json
import random
import uuid

import pytest
import redis.asyncio as aioredis

from brain.backends.redis.conversation import RedisMemoryStore
from brain.backends.redis.conversation_records import bucket_seq, packed_id
from brain.message import Message
from brain.storage.conversation import Conversation, WriteBatch

CONV = Conversation("alice", "c1")
WORDS = "the train to Lyon leaves at nine and we should book a table near the river for dinner".split()
USER_REQUIREMENT = "metagpt.actions.add_requirement.UserRequirement"  # MetaGPT's cause_by of a user's message
HANZI = "我们明天早上坐火车去杭州然后在西湖边的餐厅吃午饭再去博物馆看展览"


def test_packed_ids_and_buckets() -> None:
    hex_id = "0123456789abcdef0123456789abcdef"
    assert packed_id(hex_id) == bytes.fromhex(hex_id)
    assert packed_id(hex_id.upper()) == b"" and packed_id("m1") == b"" and packed_id(hex_id + "0") == b""
    other = bytes(range(1, 17))
    # the id also appears misaligned (inside another entry's bytes): only an aligned entry counts
    bucket = (
        other[:8]
        + packed_id(hex_id)[:8]
        + (7).to_bytes(4, "big")
        + packed_id(hex_id)
        + (300).to_bytes(4, "big")
    )
    assert bucket_seq(bucket, packed_id(hex_id)) == 300
    assert bucket_seq(bucket, other) is None and bucket_seq(None, packed_id(hex_id)) is None


async def test_old_format_records_read_and_stay_idempotent(redis_client: aioredis.Redis) -> None:
    """Records as the previous version wrote them, raw into Redis: every field, `t:<id>` id entries and
    the pending text in the meta hash."""
    store = RedisMemoryStore(redis_client, prefix="t")
    keys = store.keys(CONV)
    old_ids = [uuid.uuid4().hex, "m-2"]
    for seq, (mid, role) in enumerate(zip(old_ids, ("user", "assistant"), strict=True), 1):
        msg = {"id": mid, "role": role, "content": f"old {seq}", "sent_from": "", "send_to": [],
               "cause_by": "", "created_at": "2026-11-27T00:16:24.953669Z", "metadata": {}}  # fmt: skip
        await redis_client.rpush(keys.turns, json.dumps({"v": 1, "tok": 3, "msg": msg}))
        await redis_client.hset(keys.ids, f"t:{mid}", seq)
    await redis_client.hset(
        keys.meta,
        mapping={"v": 1, "user_id": "alice", "chat_id": "c1", "summary": "", "summary_upto": 0,
                 "window_tokens": 6, "version": 2, "title": "", "last_talk": "a pending question"},
    )  # fmt: skip
    state = await store.load(CONV, window_turns=10, knowledge_items=0)
    assert [(t.seq, t.message.id, t.message.role, t.message.content) for t in state.window] == [
        (1, old_ids[0], "user", "old 1"),
        (2, "m-2", "assistant", "old 2"),
    ]
    assert state.meta.last_talk == "a pending question" and state.meta.turn_count == 2
    assert [await store.seq_of(CONV, i) for i in old_ids] == [1, 2]
    again = Message(id=old_ids[0], content="old 1")
    fresh = Message(content="new")
    result = await store.write(CONV, WriteBatch(turns=((again, 1), (fresh, 1)), set_last_talk=True))
    assert result.seqs == (1, 3) and result.added == 1 and result.turn_count == 3
    assert await store.seq_of(CONV, fresh.id) == 3
    assert await redis_client.hget(keys.meta, "last_talk") is None  # the old field is gone once cleared
    assert (await store.load(CONV, window_turns=10, knowledge_items=0)).meta.last_talk is None
    assert [t.message.id for t in await store.read_turns(CONV, 1, 5)] == [*old_ids, fresh.id]


async def test_new_records_leave_defaults_out_and_pending_text_keeps_meta_compact(
    redis_client: aioredis.Redis,
) -> None:
    store = RedisMemoryStore(redis_client, prefix="t")
    keys = store.keys(CONV)
    long_talk = "A question that is well over sixty-four bytes long, as most questions are. " * 2
    await store.load(CONV, window_turns=5, knowledge_items=0, pending=long_talk)
    assert (await store.load(CONV, window_turns=5, knowledge_items=0)).meta.last_talk == long_talk
    user, answer = Message(content="hi"), Message(role="assistant", content="hello", metadata={"k": 1})
    await store.write(CONV, WriteBatch(turns=((user, 1), (answer, 2)), set_last_talk=True))
    first = json.loads(await redis_client.lindex(keys.turns, 0))
    at = user.created_at.isoformat().replace("+00:00", "Z")
    assert first == {"v": 1, "tok": 1, "msg": {"id": user.id, "content": "hi", "created_at": at}}
    state = await store.load(CONV, window_turns=5, knowledge_items=0)
    assert [t.message for t in state.window] == [user, answer] and state.meta.last_talk is None
    assert await redis_client.exists(keys.pending) == 0
    assert await redis_client.object("encoding", keys.meta) == b"listpack"
    assert await redis_client.hget(keys.ids, f"t:{user.id}") is None  # packed instead
    assert [await store.seq_of(CONV, m.id) for m in (user, answer)] == [1, 2]


def _text(rng: random.Random, size: int, chinese: bool) -> str:
    if chinese:
        return "".join(rng.choice(HANZI) for _ in range(size // 3))
    out = ""
    while len(out) < size:
        out += rng.choice(WORDS) + " "
    return out.strip()


async def test_brain_mode_costs_at_most_two_and_a_half_times_the_text(redis_client: aioredis.Redis) -> None:
    """1,000 realistic chat messages (a user's ~100 bytes, an answer's ~400, English and Chinese), each
    turn's start saving the pending text: the conversation's keys cost at most 2.5x the raw text and less
    than the same turns as one MetaGPT BrainMemory JSON blob (its `model_dump_json()`, as MetaGPT stores
    it)."""
    store = RedisMemoryStore(redis_client, prefix="t")
    for chinese in (False, True):
        rng = random.Random(5)
        conv = Conversation("u", f"zh{chinese}")
        raw, history = 0, []
        for _ in range(500):
            user, answer = (
                _text(rng, rng.randint(60, 140), chinese),
                _text(rng, rng.randint(250, 550), chinese),
            )
            await store.load(conv, window_turns=40, knowledge_items=0, pending=user)
            pair = (Message(content=user), Message(role="assistant", content=answer))
            await store.write(conv, WriteBatch(turns=tuple((m, 10) for m in pair), set_last_talk=True))
            raw += len(user.encode()) + len(answer.encode())
            history += [
                {"id": m.id, "content": m.content, "instruct_content": None, "role": m.role, "cause_by": "",
                 "sent_from": "", "send_to": ["<all>"], "metadata": {}}
                for m in pair
            ]  # fmt: skip
        cost = sum([await redis_client.memory_usage(k, samples=0) or 0 for k in store.keys(conv).all])
        blob = json.dumps({"history": history, "knowledge": [], "historical_summary": "", "last_talk": None},
                          ensure_ascii=False, separators=(",", ":"))  # fmt: skip
        await redis_client.set("blob", blob)
        metagpt = await redis_client.memory_usage("blob", samples=0)
        assert cost <= 2.5 * raw and cost < metagpt, (chinese, cost / raw, metagpt / raw)


def test_parsed_turns_are_shared_by_bytes_and_place_only() -> None:
    from brain.backends.redis.conversation_records import parse_turns, turn_record

    one = turn_record(Message(id="m1", content="你好 hello"), 3)
    two = turn_record(Message(id="m2", content="again"), 2)
    first = parse_turns("k", [one, two], 0)
    assert [(t.seq, t.tokens, t.message.id) for t in first] == [(1, 3, "m1"), (2, 2, "m2")]
    again = parse_turns(
        "k", [bytes(bytearray(one)), bytes(bytearray(two))], 0
    )  # equal bytes read again: the same turns
    assert all(a is b for a, b in zip(first, again, strict=True))
    moved = parse_turns("other", [one], 7)  # the same record elsewhere (another chat): its own place
    assert moved[0].seq == 8 and moved[0].message == first[0].message


def test_parsed_turns_held_are_bounded_by_their_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    from brain.backends.redis import conversation_records as records

    small = [records.turn_record(Message(id=f"s{i}", content=f"short {i}"), 2) for i in range(3)]
    filler = [records.turn_record(Message(id=f"f{i}", content="x" * 300), 80) for i in range(3)]
    budget = sum(map(len, small + filler)) - 1  # the small ones and the filler do not fit together
    monkeypatch.setattr(records, "_PARSED", records._ParsedTurns())
    monkeypatch.setattr(records, "_PARSED_BYTES", budget)
    held = records.parse_turns("k", small, 0)
    assert records._PARSED.size == sum(map(len, small)) and len(records._PARSED.turns) == 3
    huge = records.turn_record(Message(id="h", content="长" * budget), 2_000)  # more than the whole budget
    first, again = records.parse_turns("k", [huge], 3), records.parse_turns("k", [huge], 3)
    assert first[0].message.content == "长" * budget and first[0] is not again[0]  # parsed, never kept
    assert len(records._PARSED.turns) == 3  # and what the cache held stays
    records.parse_turns("k", filler, 3)  # past the budget with the small ones: emptied first
    assert set(records._PARSED.turns) == set(filler)
    assert records._PARSED.size == sum(map(len, filler))
    assert held[0] == records.parse_turns("k", small, 0)[0]


async def test_written_turns_are_read_back_without_parsing_as_a_parse_gives_them(
    redis_client: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    from brain.backends.redis import conversation_records as records

    monkeypatch.setattr(records, "_PARSED", records._ParsedTurns())
    store = RedisMemoryStore(redis_client, prefix="written")
    conv = Conversation("carol", "c1")
    plain = [
        Message(content=HANZI),
        Message(role="assistant", content="好的", sent_from="Lily", cause_by="TalkAction"),
    ]
    tagged = Message(content="with metadata", metadata={"pair": (1, 2)})  # a tuple comes back a list
    await store.write(conv, WriteBatch(turns=tuple((m, 9) for m in [*plain, tagged])))
    parsed: list[int] = []
    parse = records.parse

    def counted(adapter: object, key: str, raw: list[bytes], offset: int = 0) -> list[object]:
        parsed.append(len(raw))
        return parse(adapter, key, raw, offset)  # type: ignore[arg-type]

    monkeypatch.setattr(records, "parse", counted)
    state = await store.load(conv, window_turns=10, knowledge_items=0)
    assert parsed == [1]  # the message with metadata only
    assert [t.message for t in state.window] == [
        *plain,
        tagged.model_copy(update={"metadata": {"pair": [1, 2]}}),
    ]
    assert all(
        t.message is m for t, m in zip(state.window[:2], plain, strict=True)
    )  # the very values written
    monkeypatch.setattr(records, "_PARSED", records._ParsedTurns())  # what another process reads
    again = await store.load(conv, window_turns=10, knowledge_items=0)
    assert again.window == state.window and parsed == [1, 3]
    assert [t.message.created_at.isoformat() for t in again.window] == [
        t.message.created_at.isoformat() for t in state.window
    ]


def test_records_are_what_pydantic_writes_without_defaults() -> None:
    """`turn_record` and `knowledge_record` write, byte for byte, what `model_dump_json(exclude_defaults=
    True)` of their models writes, for messages with and without each default-valued field."""
    from brain.backends.redis.conversation_records import (
        KnowledgeRecord,
        TurnRecord,
        knowledge_record,
        turn_record,
    )

    messages = [
        Message(content="plain"),
        Message(id="m-1", role="assistant", content=HANZI + ' "quoted" \\ \n\t\u2028', sent_from="Lily"),
        Message(content="to many", send_to=("a", "b"), cause_by=USER_REQUIREMENT, metadata={"k": [1, "二"]}),
        Message(role="system", content="😀 x", sent_from="", metadata={}),
    ]
    for message in messages:
        expected = TurnRecord(v=1, tok=7, msg=message).model_dump_json(exclude_defaults=True).encode()
        assert turn_record(message, 7) == expected
        assert json.loads(expected)["msg"].keys() >= {"id", "content", "created_at"}
        expected = KnowledgeRecord(v=1, msg=message).model_dump_json(exclude_defaults=True).encode()
        assert knowledge_record(message) == expected


def test_a_subclass_of_message_is_stored_as_a_message() -> None:
    """What a record keeps is a `Message` (a subclass's own fields would make it unreadable: records are
    read with extra fields forbidden), as the record model's field type wrote it."""
    from brain.backends.redis.conversation_records import TURNS, TurnRecord, turn_record

    class Tagged(Message):
        tag: str = "kept apart"

    tagged = Tagged(content="hello", tag="not stored")
    record = turn_record(tagged, 2)
    assert record == TurnRecord(v=1, tok=2, msg=tagged).model_dump_json(exclude_defaults=True).encode()
    assert TURNS.validate_json(b"[" + record + b"]")[0].msg == Message(**tagged.model_dump(exclude={"tag"}))
