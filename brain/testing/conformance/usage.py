"""Conformance suite of usage storage (`Backend.usage`): `UsageStoreConformance`. Subclass it in a test
module and override its `backend` fixture; the suite needs pytest-asyncio in auto mode."""

from __future__ import annotations

import asyncio

import pytest

from brain.errors import InputError
from brain.llm.usage import Usage
from brain.storage import Backend, UsageRow
from brain.testing.conformance.base import BackendSuite

__all__ = ["UsageStoreConformance"]


def _usage(prompt: int, completion: int) -> Usage:
    return Usage(prompt_tokens=prompt, completion_tokens=completion)


class UsageStoreConformance(BackendSuite):
    """Running totals per (chat, model) of each user, added atomically, listed by chat then model.
    Override the `backend` fixture: a `Backend` whose `prefix` no other test uses (or an empty one)."""

    async def test_add_then_rows(self, backend: Backend) -> None:
        await backend.usage.add("u-add", "chat", "gpt-4o", _usage(100, 20))
        (row,) = await backend.usage.rows("u-add")
        assert row == UsageRow(
            chat_id="chat", model="gpt-4o", calls=1, prompt_tokens=100, completion_tokens=20
        )
        assert row.total_tokens == 120

    async def test_adds_accumulate(self, backend: Backend) -> None:
        await backend.usage.add("u-sum", "chat", "m", _usage(10, 1))
        await backend.usage.add("u-sum", "chat", "m", _usage(5, 2), calls=3)
        await backend.usage.add("u-sum", "chat", "m", _usage(7, 0), calls=0)
        assert await backend.usage.rows("u-sum") == [
            UsageRow(chat_id="chat", model="m", calls=4, prompt_tokens=22, completion_tokens=3)
        ]

    async def test_rows_are_by_chat_then_model(self, backend: Backend) -> None:
        for chat, model in (("b", "z"), ("b", "m"), ("a", "z"), ("a", "m"), ("a", "M"), ("ab", "a")):
            await backend.usage.add("u-order", chat, model, _usage(1, 1))
        rows = await backend.usage.rows("u-order")
        assert [(r.chat_id, r.model) for r in rows] == [
            ("a", "M"),
            ("a", "m"),
            ("a", "z"),
            ("ab", "a"),
            ("b", "m"),
            ("b", "z"),
        ]

    async def test_chats_sort_by_their_raw_bytes(self, backend: Backend) -> None:
        chats: list[str | bytes] = [b"\xff\xfe", "中文", "z", "Z", b"\x00\x01", "é"]
        for chat in chats:
            await backend.usage.add("u-bytes-order", chat, "m", _usage(1, 0))
        rows = await backend.usage.rows("u-bytes-order")
        assert [r.chat_id for r in rows] == ["\x00\x01", "Z", "z", "é", "中文", b"\xff\xfe"]

    async def test_rows_of_one_chat(self, backend: Backend) -> None:
        await backend.usage.add("u-one-chat", "c1", "m1", _usage(1, 1))
        await backend.usage.add("u-one-chat", "c2", "m1", _usage(2, 2))
        await backend.usage.add("u-one-chat", "c2", "m2", _usage(3, 3))
        rows = await backend.usage.rows("u-one-chat", "c2")
        assert [(r.model, r.prompt_tokens) for r in rows] == [("m1", 2), ("m2", 3)]
        assert await backend.usage.rows("u-one-chat", "c3") == []

    async def test_rows_of_an_unknown_user_are_empty(self, backend: Backend) -> None:
        assert await backend.usage.rows("u-nobody") == []
        assert await backend.usage.rows("u-nobody", "chat") == []

    async def test_users_are_isolated(self, backend: Backend) -> None:
        users: list[str | bytes] = ["u-iso-a", "u-iso-b", b"\xff-u-iso", "用户 🧠", "u-" + "x" * 5_000]
        for n, user in enumerate(users, start=1):
            await backend.usage.add(user, "chat", "m", _usage(n, 0))
        assert await backend.usage.drop("u-iso-a") == 1
        for n, user in enumerate(users, start=1):
            assert [r.prompt_tokens for r in await backend.usage.rows(user)] == ([] if n == 1 else [n])

    async def test_str_and_bytes_ids_are_one(self, backend: Backend) -> None:
        await backend.usage.add("u-same", "chat-同", "m", _usage(1, 0))
        await backend.usage.add(b"u-same", "chat-同".encode(), "m", _usage(2, 0))
        assert await backend.usage.rows(b"u-same") == [
            UsageRow(chat_id="chat-同", model="m", calls=2, prompt_tokens=3, completion_tokens=0)
        ]

    async def test_odd_chats_and_models_stay_apart(self, backend: Backend) -> None:
        pairs: list[tuple[str | bytes, str]] = [
            ("a", "b:c"),
            ("a:b", "c"),
            ("a", "b c"),
            ("a b", "c"),
            (b"\xff\x00", "模型 🧠"),
            ("😀", "gpt-4o/2024-08-06"),
        ]
        for n, (chat, model) in enumerate(pairs, start=1):
            await backend.usage.add("u-odd", chat, model, _usage(n, n))
        rows = await backend.usage.rows("u-odd")
        assert sorted(
            (r.chat_id, r.model, r.prompt_tokens) for r in rows if isinstance(r.chat_id, str)
        ) == sorted(
            (chat, model, n) for n, (chat, model) in enumerate(pairs, start=1) if isinstance(chat, str)
        )
        assert [(r.model, r.calls) for r in rows if r.chat_id == b"\xff\x00"] == [("模型 🧠", 1)]

    async def test_concurrent_adds_sum_exactly(self, backend: Backend) -> None:
        await asyncio.gather(
            *(backend.usage.add("u-race", "chat", "m", _usage(n, 1), calls=2) for n in range(100)),
            *(backend.usage.add("u-race", "chat", "other", _usage(1, 1)) for _ in range(50)),
        )
        rows = await backend.usage.rows("u-race")
        assert [(r.model, r.calls, r.prompt_tokens, r.completion_tokens) for r in rows] == [
            ("m", 200, sum(range(100)), 100),
            ("other", 50, 50, 50),
        ]

    async def test_drop_every_row_of_a_user(self, backend: Backend) -> None:
        for chat, model in (("c1", "m1"), ("c1", "m2"), ("c2", "m1")):
            await backend.usage.add("u-drop", chat, model, _usage(1, 1))
        assert await backend.usage.drop("u-drop") == 3
        assert await backend.usage.drop("u-drop") == 0
        assert await backend.usage.rows("u-drop") == []

    async def test_drop_one_chat(self, backend: Backend) -> None:
        for chat, model in (("c1", "m1"), ("c1", "m2"), ("c2", "m1")):
            await backend.usage.add("u-drop-chat", chat, model, _usage(1, 1))
        assert await backend.usage.drop("u-drop-chat", b"c1") == 2
        assert await backend.usage.drop("u-drop-chat", "c1") == 0
        assert [(r.chat_id, r.model) for r in await backend.usage.rows("u-drop-chat")] == [("c2", "m1")]

    async def test_empty_ids_are_input_errors(self, backend: Backend) -> None:
        with pytest.raises(InputError):
            await backend.usage.add("", "chat", "m", _usage(1, 1))
        with pytest.raises(InputError):
            await backend.usage.add("u-empty-chat", b"", "m", _usage(1, 1))
        with pytest.raises(InputError):
            await backend.usage.rows("")
        with pytest.raises(InputError):
            await backend.usage.drop("", None)
        assert await backend.usage.rows("u-empty-chat") == []

    async def test_dropped_usage_leaves_no_data(self, backend: Backend) -> None:
        await backend.usage.add("u-leftovers", "chat", "m", _usage(1, 1))
        assert await backend.user_leftovers("u-leftovers") != []
        assert await backend.usage.drop("u-leftovers", "chat") == 1
        assert await backend.user_leftovers("u-leftovers") == []
