"""Conformance suite of API key storage (`Backend.api_keys`): `ApiKeyStoreConformance`. Subclass it in a
test module and override its `backend` fixture; the suite needs pytest-asyncio in auto mode."""

from __future__ import annotations

import asyncio
import re
import time

import pytest

from brain.errors import InputError, NotFoundError
from brain.storage import Backend
from brain.storage.keys import KEY_PREFIX
from brain.testing.conformance.base import BackendSuite

__all__ = ["ApiKeyStoreConformance"]

_LONG_WINDOW = 10_000_000  # seconds: no test straddles two windows


class ApiKeyStoreConformance(BackendSuite):
    """Keys shown once and verified by digest, listed oldest first, revoked at once; request counts per
    fixed window. A store keeps every key of its prefix, so each test names its own users and looks only
    at their keys. Override the `backend` fixture: a `Backend` whose `prefix` no other test uses (or an
    empty one)."""

    async def test_create_returns_the_record_and_the_secret(self, backend: Backend) -> None:
        before = time.time()
        key, secret = await backend.api_keys.create("k-create", agent="helper", name="laptop")
        assert (key.user, key.agent, key.name, key.revoked_at, key.active) == (
            "k-create",
            "helper",
            "laptop",
            None,
            True,
        )
        assert before - 1 <= key.created_at <= time.time() + 1
        assert re.fullmatch(rf"{KEY_PREFIX}{key.id}_[A-Za-z0-9_-]{{20,}}", secret)
        assert secret not in key.model_dump_json()

    async def test_verify_returns_the_active_key(self, backend: Backend) -> None:
        key, secret = await backend.api_keys.create("k-verify")
        assert await backend.api_keys.verify(secret) == key

    async def test_verify_refuses_anything_else(self, backend: Backend) -> None:
        key, secret = await backend.api_keys.create("k-refuse")
        for wrong in (
            "",
            KEY_PREFIX,
            secret[len(KEY_PREFIX) :],
            secret + "x",
            secret[:-1],
            secret[:-1] + ("A" if secret[-1] != "A" else "B"),
            secret.upper(),
            f"{KEY_PREFIX}{key.id}_",
            KEY_PREFIX + "0" * 300,
            "bk_🧠_密钥",
        ):
            assert await backend.api_keys.verify(wrong) is None, wrong

    async def test_every_key_is_new(self, backend: Backend) -> None:
        made = await asyncio.gather(*(backend.api_keys.create("k-unique") for _ in range(20)))
        assert len({key.id for key, _ in made}) == len({secret for _, secret in made}) == 20
        for key, secret in made:
            assert await backend.api_keys.verify(secret) == key

    async def test_list_is_oldest_first_per_user(self, backend: Backend) -> None:
        a1, _ = await backend.api_keys.create("k-list-a")
        b1, _ = await backend.api_keys.create("k-list-b")
        a2, _ = await backend.api_keys.create("k-list-a", name="second")
        a_keys = sorted([a1, a2], key=lambda k: (k.created_at, k.id))
        assert await backend.api_keys.list("k-list-a") == a_keys
        assert await backend.api_keys.list("k-list-b") == [b1]
        assert await backend.api_keys.list("k-list-nobody") == []
        everyone = [k for k in await backend.api_keys.list() if k.user in ("k-list-a", "k-list-b")]
        assert everyone == sorted([a1, a2, b1], key=lambda k: (k.created_at, k.id))

    async def test_revoke_takes_effect_at_once(self, backend: Backend) -> None:
        key, secret = await backend.api_keys.create("k-revoke")
        other, other_secret = await backend.api_keys.create("k-revoke")
        before = time.time()
        revoked = await backend.api_keys.revoke(key.id)
        assert revoked.revoked_at is not None and before - 1 <= revoked.revoked_at <= time.time() + 1
        assert revoked == key.model_copy(update={"revoked_at": revoked.revoked_at})
        assert not revoked.active
        assert await backend.api_keys.verify(secret) is None
        assert await backend.api_keys.verify(other_secret) == other
        assert {k.id: k for k in await backend.api_keys.list("k-revoke")} == {
            key.id: revoked,
            other.id: other,
        }

    async def test_revoking_twice_keeps_the_first_time(self, backend: Backend) -> None:
        key, _ = await backend.api_keys.create("k-revoke-twice")
        first = await backend.api_keys.revoke(key.id)
        await asyncio.sleep(0.01)
        assert await backend.api_keys.revoke(key.id) == first
        assert await backend.api_keys.list("k-revoke-twice") == [first]

    async def test_revoke_unknown_is_not_found(self, backend: Backend) -> None:
        for key_id in ("0123456789abcdef", "nope", ""):
            with pytest.raises(NotFoundError) as caught:
                await backend.api_keys.revoke(key_id)
            assert str(caught.value) == f"there is no API key {key_id!r}"

    async def test_create_validates_ids(self, backend: Backend) -> None:
        for user, agent in (("", None), ("k-bad-agent", ""), ("x" * 70_000, None)):
            with pytest.raises(InputError):
                await backend.api_keys.create(user, agent=agent)
        assert await backend.api_keys.list("k-bad-agent") == []

    async def test_odd_users_round_trip(self, backend: Backend) -> None:
        for user in ("张三 🧠", "k-" + "long" * 500, "k-quote'\"\\"):
            key, secret = await backend.api_keys.create(user, agent="助手 🤖", name="笔记本 💻")
            assert await backend.api_keys.verify(secret) == key
            assert await backend.api_keys.list(user) == [key]
            assert (key.user, key.agent, key.name) == (user, "助手 🤖", "笔记本 💻")

    async def test_hit_counts_within_the_window(self, backend: Backend) -> None:
        key, _ = await backend.api_keys.create("k-hit")
        verdicts = [await backend.api_keys.hit(key.id, 3, _LONG_WINDOW) for _ in range(5)]
        assert [(v.allowed, v.count) for v in verdicts] == [
            (True, 1),
            (True, 2),
            (True, 3),
            (False, 4),
            (False, 5),
        ]
        assert all(1 <= v.retry_after <= _LONG_WINDOW for v in verdicts)

    async def test_concurrent_hits_count_exactly(self, backend: Backend) -> None:
        key, _ = await backend.api_keys.create("k-hit-race")
        verdicts = await asyncio.gather(*(backend.api_keys.hit(key.id, 30, _LONG_WINDOW) for _ in range(50)))
        assert sorted(v.count for v in verdicts) == list(range(1, 51))
        assert sorted(v.count for v in verdicts if v.allowed) == list(range(1, 31))

    async def test_hits_are_counted_per_key(self, backend: Backend) -> None:
        (a, _), (b, _) = await backend.api_keys.create("k-hit-a"), await backend.api_keys.create("k-hit-b")
        for _ in range(3):
            await backend.api_keys.hit(a.id, 10, _LONG_WINDOW)
        assert (await backend.api_keys.hit(b.id, 10, _LONG_WINDOW)).count == 1
        assert (await backend.api_keys.hit(a.id, 10, _LONG_WINDOW)).count == 4

    async def test_retry_after_is_the_rest_of_the_window(self, backend: Backend) -> None:
        key, _ = await backend.api_keys.create("k-retry")
        assert (await backend.api_keys.hit(key.id, 1, 1)).retry_after == 1
        now = time.time()
        verdict = await backend.api_keys.hit(key.id, 1, 3_600)
        expected = 3_600 - int(now) % 3_600
        assert expected - 2 <= verdict.retry_after <= expected + 1

    async def test_hit_with_a_malformed_key_id_is_an_input_error(self, backend: Backend) -> None:
        for key_id in ("", "abc:def", "k-*", "😀"):
            with pytest.raises(InputError):
                await backend.api_keys.hit(key_id, 1, 60)

    async def test_verify_counted_is_verify_then_hit(self, backend: Backend) -> None:
        key, secret = await backend.api_keys.create("k-counted")
        other, _ = await backend.api_keys.create("k-counted")
        verdicts = [await backend.api_keys.verify_counted(secret, 2, _LONG_WINDOW) for _ in range(3)]
        assert [k for k, _ in verdicts] == [key, key, key]
        assert [(v.allowed, v.count) for _, v in verdicts if v is not None] == [
            (True, 1),
            (True, 2),
            (False, 3),
        ]
        assert all(v is not None and 1 <= v.retry_after <= _LONG_WINDOW for _, v in verdicts)
        assert (await backend.api_keys.hit(key.id, 10, _LONG_WINDOW)).count == 4  # the same counter
        assert (await backend.api_keys.hit(other.id, 10, _LONG_WINDOW)).count == 1
        assert await backend.api_keys.verify_counted(secret, 0, _LONG_WINDOW) == (key, None)  # no limit
        assert (await backend.api_keys.hit(key.id, 10, _LONG_WINDOW)).count == 5  # nothing counted

    async def test_verify_counted_counts_nothing_for_a_refused_secret(self, backend: Backend) -> None:
        key, secret = await backend.api_keys.create("k-counted-refused")
        await backend.api_keys.revoke(key.id)
        fresh, fresh_secret = await backend.api_keys.create("k-counted-refused")
        forged = f"{KEY_PREFIX}{fresh.id}_{fresh_secret[-10:]}"  # the right id, the wrong secret
        for wrong in (secret, forged, fresh_secret + "x", f"{KEY_PREFIX}{fresh.id}", "bk_🧠_密钥", "", "bk_"):
            assert await backend.api_keys.verify_counted(wrong, 5, _LONG_WINDOW) == (None, None), wrong
        assert (await backend.api_keys.hit(key.id, 10, _LONG_WINDOW)).count == 1
        assert (await backend.api_keys.hit(fresh.id, 10, _LONG_WINDOW)).count == 1
