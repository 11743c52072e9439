"""Conformance suite of core memory blocks: `CoreBlockStoreConformance` (`Backend.core`). Subclass it in a
test module and override its `backend` fixture; the suite needs pytest-asyncio in auto mode."""

from __future__ import annotations

import asyncio

import pytest

from brain.errors import InputError
from brain.keys import agent_scope, shared_scope, user_scope
from brain.storage import Backend, Block, BlockLimitError
from brain.testing.conformance.base import BackendSuite

__all__ = ["ODD_IDS", "CoreBlockStoreConformance"]

ODD_IDS: tuple[str | bytes, ...] = (b"\xff\xfe\x00bytes", "用户-记忆", "🧠🦙 emoji", "long-" + "x" * 5_000)


class CoreBlockStoreConformance(BackendSuite):
    """Core memory blocks: limits in characters, every edit atomic and checked, errors that say why.
    Override the `backend` fixture: a `Backend` whose `prefix` no other test uses (or an empty one)."""

    async def test_create_then_list_by_label(self, backend: Backend) -> None:
        scope = user_scope("core-list")
        made = await backend.core.create(scope, Block(label="zeta", value="z", description="last"))
        await backend.core.create(scope, Block(label="alpha", value="a", limit=5, read_only=True))
        assert made == Block(label="zeta", value="z", description="last")
        assert await backend.core.list(scope) == [
            Block(label="alpha", value="a", limit=5, read_only=True),
            Block(label="zeta", value="z", description="last"),
        ]

    async def test_create_existing_label_is_refused_unless_replace(self, backend: Backend) -> None:
        scope = user_scope("core-exists")
        await backend.core.create(scope, Block(label="human", value="first", read_only=True))
        with pytest.raises(InputError, match=r"^block 'human' exists already$"):
            await backend.core.create(scope, Block(label="human", value="second"))
        assert (await backend.core.list(scope))[0].value == "first"
        replaced = await backend.core.create(scope, Block(label="human", value="third"), replace=True)
        assert await backend.core.list(scope) == [replaced] == [Block(label="human", value="third")]

    async def test_create_past_limit_stores_nothing(self, backend: Backend) -> None:
        scope = user_scope("core-create-limit")
        with pytest.raises(BlockLimitError) as caught:
            await backend.core.create(scope, Block(label="p", value="x" * 11, limit=10))
        assert str(caught.value) == (
            "block 'p' holds at most 10 characters; this edit would make it 11 (10 characters of room "
            "left); shorten it or replace old content"
        )
        assert isinstance(caught.value, InputError)
        assert await backend.core.list(scope) == []

    async def test_limits_count_characters_not_bytes(self, backend: Backend) -> None:
        scope = user_scope("core-chars")
        full = await backend.core.create(scope, Block(label="cn", value="记忆🧠" * 5, limit=15))
        assert len(full.value) == 15
        with pytest.raises(BlockLimitError) as caught:
            await backend.core.append(scope, "cn", "好")
        assert "holds at most 15 characters; this edit would make it 17 (0 characters of room" in str(
            caught.value
        )
        assert (await backend.core.set(scope, "cn", "🧠" * 15)).value == "🧠" * 15

    async def test_set_keeps_everything_but_the_value(self, backend: Backend) -> None:
        scope = agent_scope("core-set")
        await backend.core.create(scope, Block(label="persona", value="old", limit=99, description="who"))
        assert await backend.core.set(scope, "persona", "新的 🧠") == Block(
            label="persona", value="新的 🧠", limit=99, description="who"
        )
        assert (await backend.core.list(scope))[0].value == "新的 🧠"

    async def test_append_adds_a_line(self, backend: Backend) -> None:
        scope = user_scope("core-append")
        await backend.core.create(scope, Block(label="notes"))
        assert (await backend.core.append(scope, "notes", "first")).value == "first"
        assert (await backend.core.append(scope, "notes", "第二 🧠")).value == "first\n第二 🧠"
        assert (await backend.core.list(scope))[0].value == "first\n第二 🧠"

    async def test_replace_first_exact_occurrence(self, backend: Backend) -> None:
        scope = user_scope("core-replace")
        await backend.core.create(scope, Block(label="h", value="猫 likes 猫food (.*); 猫"))
        assert (await backend.core.replace(scope, "h", "猫", "🐈")).value == "🐈 likes 猫food (.*); 猫"
        assert (await backend.core.replace(scope, "h", " (.*)", "")).value == "🐈 likes 猫food; 猫"
        assert (await backend.core.replace(scope, "h", "likes ", "%1")).value == "🐈 %1猫food; 猫"

    async def test_replace_of_absent_or_empty_text(self, backend: Backend) -> None:
        scope = user_scope("core-replace-missing")
        await backend.core.create(scope, Block(label="h", value="Alice likes tea"))
        message = r"^the text to replace was not found in block 'h'; it must match exactly$"
        for old in ("alice", "", "tea!", "l.*e"):
            with pytest.raises(InputError, match=message):
                await backend.core.replace(scope, "h", old, "x")
        assert (await backend.core.list(scope))[0].value == "Alice likes tea"

    async def test_edits_of_a_missing_block(self, backend: Backend) -> None:
        scope = user_scope("core-missing")
        await backend.core.create(scope, Block(label="here"))
        for edit in (
            backend.core.set(scope, "ghost", "x"),
            backend.core.append(scope, "ghost", "x"),
            backend.core.replace(scope, "ghost", "a", "b"),
            backend.core.set(user_scope("core-missing-nobody"), "here", "x"),
        ):
            with pytest.raises(InputError, match=r"^there is no core memory block '(ghost|here)'$"):
                await edit
        assert await backend.core.list(user_scope("core-missing-nobody")) == []

    async def test_read_only_blocks_refuse_edits(self, backend: Backend) -> None:
        scope = shared_scope("core-read-only")
        await backend.core.create(scope, Block(label="rules", value="be kind", read_only=True))
        for edit in (
            backend.core.set(scope, "rules", "x"),
            backend.core.append(scope, "rules", "x"),
            backend.core.replace(scope, "rules", "kind", "rude"),
        ):
            with pytest.raises(InputError, match=r"^block 'rules' is read-only$"):
                await edit
        assert (await backend.core.list(scope))[0].value == "be kind"

    async def test_edit_past_limit_says_room_left_and_changes_nothing(self, backend: Backend) -> None:
        scope = user_scope("core-edit-limit")
        await backend.core.create(scope, Block(label="b", value="1234", limit=10))
        with pytest.raises(BlockLimitError, match=r"would make it 11 \(6 characters of room left\)"):
            await backend.core.set(scope, "b", "x" * 11)
        with pytest.raises(BlockLimitError, match=r"at most 10 characters; this edit would make it 13 \(6"):
            await backend.core.replace(scope, "b", "2", "abcdefghij")
        with pytest.raises(BlockLimitError, match=r"would make it 12 \(6 characters"):
            await backend.core.append(scope, "b", "七个字符七个字")
        assert (await backend.core.list(scope))[0].value == "1234"

    async def test_concurrent_appends_never_pass_the_limit(self, backend: Backend) -> None:
        scope = shared_scope("core-concurrent-append")
        await backend.core.create(scope, Block(label="log", limit=50))
        results = await asyncio.gather(
            *(backend.core.append(scope, "log", "ab") for _ in range(40)), return_exceptions=True
        )
        assert sum(isinstance(r, Block) for r in results) == 17  # "ab" then 16 times "\nab": 50 characters
        assert all(isinstance(r, Block | BlockLimitError) for r in results)
        assert (await backend.core.list(scope))[0].value == "\n".join(["ab"] * 17)

    async def test_concurrent_creates_make_one_block(self, backend: Backend) -> None:
        scope = shared_scope("core-concurrent-create")
        blocks = [Block(label="one", value=str(i)) for i in range(10)]
        results = await asyncio.gather(
            *(backend.core.create(scope, b) for b in blocks), return_exceptions=True
        )
        made = [r for r in results if isinstance(r, Block)]
        assert len(made) == 1
        assert all(isinstance(r, InputError) and "exists already" in str(r) for r in results if r not in made)
        assert await backend.core.list(scope) == made

    async def test_delete_one_block(self, backend: Backend) -> None:
        scope = user_scope("core-delete")
        await backend.core.create(scope, Block(label="a"))
        await backend.core.create(scope, Block(label="b"))
        assert await backend.core.delete(scope, "a") is True
        assert await backend.core.delete(scope, "a") is False
        assert await backend.core.delete(scope, "never") is False
        assert [b.label for b in await backend.core.list(scope)] == ["b"]

    async def test_drop_counts_the_blocks(self, backend: Backend) -> None:
        scope, other = user_scope("core-drop"), user_scope("core-drop-other")
        for label in ("a", "b", "c"):
            await backend.core.create(scope, Block(label=label))
        await backend.core.create(other, Block(label="a"))
        assert await backend.core.drop(scope) == 3
        assert await backend.core.drop(scope) == 0
        assert await backend.core.list(scope) == []
        assert len(await backend.core.list(other)) == 1

    async def test_scopes_are_isolated(self, backend: Backend) -> None:
        scopes = [user_scope("core-iso"), agent_scope("core-iso"), shared_scope("core-iso"), *ODD_IDS]
        for i, scope in enumerate(scopes):
            await backend.core.create(scope, Block(label="human", value=f"v{i}"))
        await backend.core.append(scopes[0], "human", "more")
        assert await backend.core.drop(scopes[1]) == 1
        values = [[b.value for b in await backend.core.list(s)] for s in scopes]
        assert values == [["v0\nmore"], [], ["v2"], ["v3"], ["v4"], ["v5"], ["v6"]]

    async def test_str_and_bytes_scope_are_one(self, backend: Backend) -> None:
        await backend.core.create("core-same-scope", Block(label="a", value="x"))
        assert (await backend.core.append(b"core-same-scope", "a", "y")).value == "x\ny"
        assert await backend.core.list("core-same-scope") == await backend.core.list(b"core-same-scope")

    async def test_empty_scope_is_an_input_error(self, backend: Backend) -> None:
        with pytest.raises(InputError):
            await backend.core.create("", Block(label="a"))
        with pytest.raises(InputError):
            await backend.core.list(b"")

    async def test_values_round_trip_exactly(self, backend: Backend) -> None:
        scope = user_scope("core-round-trip")
        value = '{"json": "looking"}\n\ttabs \\ back\\slash "quotes" 中文 🧠 \u200b end '
        await backend.core.create(scope, Block(label="odd", value=value, limit=100_000))
        assert (await backend.core.list(scope))[0].value == value
        assert (await backend.core.append(scope, "odd", value)).value == value + "\n" + value

    async def test_dropped_user_scope_leaves_no_data(self, backend: Backend) -> None:
        user = "core-leftovers-🧠"
        await backend.core.create(user_scope(user), Block(label="human", value="x"))
        assert await backend.user_leftovers(user) != []
        assert await backend.core.delete(user_scope(user), "human") is True
        assert await backend.user_leftovers(user) == []
