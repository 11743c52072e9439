"""`roles.access`: the one rule of what a scope reaches, and chat ids that no request can forge. Pure."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brain.errors import InputError
from brain.memory.facts import AuditEvent, Fact
from roles.access import (
    AGENT_CHAT,
    Scope,
    agent_chat,
    check_new_chat,
    erases_fact,
    erases_user,
    request_chat,
    sees,
    sees_event,
    storage_chat,
)

OWNER = Scope(user="ann")
WRITER = Scope(user="ann", agent="writer")
CODER = Scope(user="ann", agent="coder")

HOSTILE = [
    "",
    " padded ",
    "   ",
    "a/b",  # a URL path could not name it again
    "x" * 257,
    "\x1f",
    "x\x1fy",
    AGENT_CHAT + "writer\x1fc1",
    "\x1fagent",
    "a\x00b",
    "tab\there",
    "new\nline",
    "del\x7f",
    "c1\x85",  # a C1 control character
    "lone \ud800 surrogate",
    "\udfff",
    "\u200bzero-width",  # invisible: nobody could type it again
    "a/b",
    "x" * 257,
    " padded",
]
FRIENDLY = ["c1", "聊天", "日記 2026", "emoji 🧠", "x" * 256, "agent", "a.b:c", "%2F", ".."]


@pytest.mark.parametrize("chat_id", HOSTILE)
@pytest.mark.parametrize("scope", [OWNER, WRITER])
def test_a_request_chat_id_that_no_request_could_name_again_is_refused(scope: Scope, chat_id: str) -> None:
    with pytest.raises(InputError):
        storage_chat(scope, chat_id)


@pytest.mark.parametrize("chat_id", FRIENDLY)
def test_a_user_wide_scope_stores_chats_as_named_and_an_agent_apart(chat_id: str) -> None:
    assert storage_chat(OWNER, chat_id) == chat_id
    stored = storage_chat(WRITER, chat_id)
    assert stored == f"{AGENT_CHAT}writer\x1f{chat_id}" and stored != storage_chat(CODER, chat_id)
    assert request_chat(WRITER, stored) == chat_id and request_chat(OWNER, chat_id) == chat_id
    assert request_chat(CODER, stored) is None and request_chat(OWNER, stored) is None
    assert request_chat(WRITER, chat_id) is None
    assert agent_chat(stored) == ("writer", chat_id) and agent_chat(chat_id) is None


def test_stored_ids_no_request_could_name_are_nobodys() -> None:
    stored_ids: list[str | bytes] = [
        b"c1",
        "",
        "tab\t",
        AGENT_CHAT + "writer\x1f",
        AGENT_CHAT + "writer\x1fa\x1fb",
    ]
    for stored in stored_ids:
        assert request_chat(OWNER, stored) is None and request_chat(WRITER, stored) is None
    assert agent_chat(AGENT_CHAT + "writer") is None and agent_chat(b"\x1fagent\x1fa\x1fc") is None


def test_an_agent_whose_name_extends_another_never_meets_it() -> None:
    a, ab = Scope(user="ann", agent="a"), Scope(user="ann", agent="a\x1fb")
    stored = storage_chat(ab, "c")
    assert request_chat(a, stored) is None and request_chat(ab, stored) == "c"
    assert agent_chat(stored) == ("a\x1fb", "c")


@given(
    agents=st.lists(st.text(min_size=1, max_size=8), min_size=2, max_size=2, unique=True),
    chats=st.lists(st.text(min_size=1, max_size=8), min_size=2, max_size=2),
)
def test_stored_ids_are_one_to_one_and_map_back_only_for_their_own_scope(
    agents: list[str], chats: list[str]
) -> None:
    scopes = [OWNER, *(Scope(user="ann", agent=a) for a in agents)]
    stored: dict[str, tuple[Scope, str]] = {}
    for scope in scopes:
        for chat_id in chats:
            try:
                key = storage_chat(scope, chat_id)
            except InputError:
                continue
            assert stored.setdefault(key, (scope, chat_id)) == (scope, chat_id)
    for key, (owner, chat_id) in stored.items():
        for scope in scopes:
            assert request_chat(scope, key) == (chat_id if scope == owner else None)


def test_an_agent_sees_shared_facts_and_its_own_the_owner_every_one() -> None:
    shared, mine, other = Fact(text="s"), Fact(text="m", agent_id="writer"), Fact(text="o", agent_id="coder")
    assert [sees(WRITER, f) for f in (shared, mine, other)] == [True, True, False]
    assert all(sees(OWNER, f) for f in (shared, mine, other))
    assert [erases_fact(WRITER, f) for f in (shared, mine, other)] == [False, True, False]
    assert all(erases_fact(OWNER, f) for f in (shared, mine, other))
    assert erases_user(OWNER) and not erases_user(WRITER)


def test_an_agent_sees_the_events_of_facts_it_sees_and_the_graphs() -> None:
    facts = {f.id: f for f in (Fact(id="s", text="s"), Fact(id="m", text="m", agent_id="writer"))}
    facts["o"] = Fact(id="o", text="o", agent_id="coder")

    def event(fact_id: str, old: str = "", subject: str = "fact") -> AuditEvent:
        return AuditEvent.model_validate(
            {"id": "1-0", "event": "ADD", "fact_id": fact_id, "old_fact_id": old, "subject": subject}
        )

    assert sees_event(WRITER, event("m"), facts) and sees_event(WRITER, event("s"), facts)
    assert not sees_event(WRITER, event("o"), facts)
    assert not sees_event(WRITER, event("m", old="o"), facts)  # replaced another agent's fact
    assert not sees_event(WRITER, event("gone"), facts)  # a fact no longer stored
    assert sees_event(WRITER, event("r1", subject="relation"), facts)
    assert all(sees_event(OWNER, event(i), facts) for i in ("o", "gone"))


@pytest.mark.parametrize("chat_id", [c for c in HOSTILE if not c.startswith(AGENT_CHAT)])
def test_the_python_api_makes_no_chat_that_no_request_could_name(chat_id: str) -> None:
    with pytest.raises(InputError, match="chat_id"):
        check_new_chat("ann", chat_id)
    with pytest.raises(InputError, match=r"chat_id|agent"):
        check_new_chat("ann", AGENT_CHAT + "writer\x1f" + chat_id)


@pytest.mark.parametrize("user_id", ["", " ann", "a/b", "x" * 257, "an\u200bn", "\ud800"])
def test_the_python_api_makes_no_user_that_no_command_could_name(user_id: str) -> None:
    with pytest.raises(InputError, match="user_id"):
        check_new_chat(user_id, "c1")


def test_the_python_api_takes_friendly_ids_agent_chats_and_opaque_bytes() -> None:
    for chat_id in FRIENDLY:
        check_new_chat("张伟", chat_id)
        check_new_chat("ann", storage_chat(WRITER, chat_id))
    check_new_chat(b"\x00raw user", b"a/b \xff")  # MetaGPT's keys: opaque bytes
    with pytest.raises(InputError, match="agent"):
        check_new_chat("ann", AGENT_CHAT + "bad/agent\x1fc1")
