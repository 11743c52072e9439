from __future__ import annotations

import fnmatch
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brain import BrainMemory, InputError
from brain.keys import (
    agent_scope,
    archival_base,
    blocks_base,
    conversation_keys,
    core_key,
    encode_id,
    facts_base,
    recall_base,
    shared_scope,
    user_patterns,
    user_scope,
)

SAFE = re.compile(r"^[A-Za-z0-9_-]+$")


@given(st.one_of(st.text(min_size=1, max_size=300), st.binary(min_size=1, max_size=300)))
def test_encoded_ids_are_key_safe(value: str | bytes) -> None:
    assert SAFE.match(encode_id(value))


@given(st.text(min_size=1, max_size=120), st.text(min_size=1, max_size=120))
def test_distinct_ids_give_distinct_encodings(a: str, b: str) -> None:
    if a != b:
        assert encode_id(a) != encode_id(b)


def test_keys_share_one_hash_tag() -> None:
    keys = conversation_keys("brain", "u:*{}", "chat\n1")
    tags = {re.search(r"\{[^}]*\}", k).group(0) for k in keys.all}  # type: ignore[union-attr]
    assert len(tags) == 1
    assert keys.meta.startswith("brain:{") and keys.meta.endswith("}:meta")
    assert BrainMemory.to_redis_key("brain", "u:*{}", "chat\n1") == keys.base


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "must not be empty"),
        (b"", "must not be empty"),
        (42, "must be str or bytes"),
        ("x" * 70_000, "limited to 64 KiB"),
    ],
)
def test_bad_ids_are_rejected_clearly(value: object, message: str) -> None:
    with pytest.raises(InputError, match=message):
        encode_id(value)  # type: ignore[arg-type]


def test_long_ids_are_hashed_and_non_utf8_accepted() -> None:
    assert encode_id("x" * 10_000).startswith("h") and len(encode_id("x" * 10_000)) == 65
    assert encode_id(b"\xff\xfe") != encode_id("\xff\xfe")
    assert encode_id("\udcff")  # lone surrogates (os.fsdecode of bad bytes) are encodable


IDS = st.one_of(
    st.text(min_size=1, max_size=40),
    st.binary(min_size=1, max_size=40),
    st.sampled_from(["alice", "alice:x", "x:y", "alice.x", "a}b", "{a}", "*", "r.a", "idx.a", "user:a", "b"]),
)


def tier_keys(user: str | bytes, chat: str | bytes) -> tuple[set[str], set[str]]:
    """(keys of the chat, keys of the user) in every tier."""
    conv = conversation_keys("brain", user, chat)
    chat_keys = {
        *conv.all,
        recall_base("brain", user, chat) + ":docs",
        recall_base("brain", user, chat) + ":vec",
        blocks_base("brain", user, chat) + ":active",
        blocks_base("brain", user, chat) + ":vec:docs",
    }
    user_keys = {
        archival_base("brain", user) + ":docs",
        core_key("brain", user_scope(user)),
        facts_base("brain", user) + ":facts",
        facts_base("brain", user) + ":audit",
    }
    return chat_keys, user_keys


def raw(value: str | bytes) -> bytes:
    return value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")


@given(IDS, IDS, IDS, IDS)
def test_two_conversations_never_share_a_key_in_any_tier(u1: str, c1: str, u2: str, c2: str) -> None:
    chat1, user1 = tier_keys(u1, c1)
    chat2, user2 = tier_keys(u2, c2)
    if (raw(u1), raw(c1)) != (raw(u2), raw(c2)):
        assert not chat1 & chat2
    if raw(u1) != raw(u2):
        assert not (chat1 | user1) & (chat2 | user2)
        patterns = user_patterns("brain", u1)
        assert not [k for k in chat2 | user2 if any(fnmatch.fnmatchcase(k, p) for p in patterns)]
    patterns = user_patterns("brain", u1)
    assert all(any(fnmatch.fnmatchcase(k, p) for p in patterns) for k in chat1 | user1)
    assert not (chat1 & user1)  # tiers of one tenant never meet either


def test_agent_user_and_shared_scopes_are_distinct() -> None:
    assert len({core_key("brain", s) for s in (user_scope("a"), agent_scope("a"), shared_scope("a"))}) == 3
    assert core_key("brain", shared_scope("user:a")) != core_key("brain", user_scope("a"))


def test_conversation_ids_read_a_conversation_base_back() -> None:
    from brain.keys import conversation_ids, conversation_keys

    for user, chat in [("ann", "trip"), ("用户", "聊天"), (b"\xff\x00", "c"), ("a.b}", "{x}")]:
        base = conversation_keys("brain", user, chat).base
        assert conversation_ids(base, "brain") == (user, chat)
        assert conversation_ids(base, "other") is None
    long_id = conversation_keys("brain", "x" * 200, "c").base  # hashed: cannot be read back
    for text in (long_id, "any:key:of:mine", "brain:{bZm9v.b!!}", "brain:{bZm9v}", "brain:{}"):
        assert conversation_ids(text, "brain") is None


@given(IDS, IDS, st.sampled_from(["Lily", "agent:x", "*", "{a}"]))
def test_a_tenant_copy_is_among_its_users_keys_only(u1: str, u2: str, agent: str) -> None:
    from brain.keys import tenant_scope

    for base in (agent_scope(agent), shared_scope(agent)):
        key = core_key("brain", tenant_scope(u1, base))
        assert any(fnmatch.fnmatchcase(key, p) for p in user_patterns("brain", u1))
        assert key.startswith(core_key("brain", user_scope(u1)).removesuffix(":blocks"))  # the user's slot
        assert key not in {core_key("brain", s) for s in (base, user_scope(u1), tenant_scope(u1, b"x:y"))}
        if raw(u1) != raw(u2):
            assert key != core_key("brain", tenant_scope(u2, base))
            assert not any(fnmatch.fnmatchcase(key, p) for p in user_patterns("brain", u2))


def test_only_a_tenant_scope_as_built_maps_into_a_users_keys() -> None:
    from brain.keys import tenant_scope

    assert tenant_scope("ann", agent_scope("Lily")) == b"tenant:3:ann:agent:Lily"
    assert tenant_scope("a:b", b"c") != tenant_scope("a", b"b:c")
    assert core_key("brain", tenant_scope("a:b", b"c")) != core_key("brain", tenant_scope("a", b"b:c"))
    user_tag = core_key("brain", user_scope("ann")).removesuffix(":blocks")
    for lookalike in ("tenant:03:ann:x", "tenant:3:ann", "tenant:9:ann:x", "tenant:x:ann:x", "tenant:3:annx"):
        assert not core_key("brain", lookalike).startswith(user_tag)
        assert core_key("brain", lookalike).endswith(":blocks")
