"""Who reaches what: the one rule behind every route, tool and page of the service. Pure.

A `Scope` is a user, optionally as one agent (an API key made with `--agent`, or `serve.mcp_agent`):

- A user-wide scope (no agent) is the user's owner: every fact and its history, the user's chats that
  belong to no agent, and erasure of the whole user.
- An agent scope (U, A) reaches U's shared facts (no `agent_id`) and A's own (`agent_id` A), the audit
  events of those facts and the graph's (user-level), A's chats and their usage, and erasure of A's chats
  and facts; never another agent's chats, facts, events, or the rest of the user.

Core blocks (the persona included) are per scope: each scope reads and edits its own copies (defaults until
its first edit, `tenant_of`), the copies its chats' model sees. Archival passages follow the fact rule: a
passage an agent scope stores is that agent's (`PASSAGE_AGENT` in its metadata); the others (the owner's, the
model's, loaded documents) are the user's shared ones. A scope sees what `passage_sees` says and deletes what
`deletes_passage` says: an agent, only its own (a deletion cannot be undone, as an erasure cannot).

An agent's chat `c` is stored as `AGENT_CHAT + A + "\\x1f" + c`. A chat id from a request may not hold a
control character, so no request can name that form: each scope's chats stay apart in storage.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

from brain.keys import check_id, raw_id
from brain.memory.facts import AuditEvent, Fact
from brain.storage.index import IndexedDoc
from brain.wire import ID_PATTERN

__all__ = [
    "AGENT_CHAT",
    "ID_PATTERN",
    "PASSAGE_AGENT",
    "Scope",
    "agent_chat",
    "agent_of",
    "agent_sees",
    "deletes_passage",
    "erases_fact",
    "erases_user",
    "passage_agent",
    "passage_sees",
    "request_chat",
    "sees",
    "sees_event",
    "storage_chat",
    "tenant_of",
]

AGENT_CHAT = "\x1fagent\x1f"
"""How every stored chat id of an agent begins (then the agent, `\\x1f`, and the chat id it was given)."""

_SEP = "\x1f"


class Scope(BaseModel):
    """Whose memory a caller reaches (a user, optionally as one agent), and who it is (for the audit)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    user: str = Field(min_length=1)
    agent: str | None = None
    actor: str = "service"


def agent_sees(agent: str | None, fact: Fact) -> bool:
    """Whether `agent` (None: the user's own, no agent) reaches a fact of its user: all of them, or the
    shared ones and its own. The rule for facts: scopes (`sees`) and turns in an agent's chat use it."""
    return agent is None or fact.agent_id in (None, agent)


def sees(scope: Scope, fact: Fact) -> bool:
    """Whether `scope` reaches the fact (one of its user's): `agent_sees` for the scope's agent."""
    return agent_sees(scope.agent, fact)


PASSAGE_AGENT = "agent_id"
"""The metadata field naming the agent whose archival passage it is (absent: a shared passage)."""


def passage_agent(doc: IndexedDoc) -> str | None:
    """The agent an archival passage belongs to (None: the user's shared passage)."""
    agent = doc.metadata.get(PASSAGE_AGENT)
    return agent if isinstance(agent, str) and agent else None


def passage_sees(scope: Scope, doc: IndexedDoc) -> bool:
    """Whether `scope` reaches an archival passage of its user: as `agent_sees` for facts."""
    return scope.agent is None or passage_agent(doc) in (None, scope.agent)


def deletes_passage(scope: Scope, doc: IndexedDoc) -> bool:
    """Whether `scope` may delete an archival passage of its user: every one, or an agent's own."""
    return scope.agent is None or passage_agent(doc) == scope.agent


def agent_of(chat_id: str | bytes) -> str | None:
    """The agent a stored chat belongs to (None: no agent's)."""
    owner = agent_chat(chat_id)
    return owner[0] if owner is not None else None


def tenant_of(agent: str | None, scope: bytes) -> bytes:
    """Where an agent scope's own copy of a user's block scope lives: `scope` itself for the user's own
    (no agent), else a scope of that agent alone, so that no agent reads or edits another's blocks."""
    if agent is None:
        return scope
    name = raw_id(agent, "agent")
    return b"agent-key:%d:" % len(name) + name + b":" + scope


def sees_event(scope: Scope, event: AuditEvent, facts: Mapping[str, Fact]) -> bool:
    """Whether `scope` reaches an audit event of its user (to read it or roll it back): graph relation
    events are user-level; a fact event needs every fact it names in `facts` (the user's facts by id,
    retired ones too) and seen. A fact no longer stored hides its events from an agent scope."""
    if scope.agent is None or event.subject == "relation":
        return True
    named = [i for i in (event.fact_id, event.old_fact_id) if i]
    return all(i in facts and sees(scope, facts[i]) for i in named)


def erases_user(scope: Scope) -> bool:
    """Whether erasing the scope's memory erases the whole user (else only the agent's chats and facts)."""
    return scope.agent is None


def erases_fact(scope: Scope, fact: Fact) -> bool:
    """Whether erasing the scope's memory erases the fact: every fact of the user, or the agent's own
    (the user's shared facts stay: other agents and the owner reach them too)."""
    return scope.agent is None or fact.agent_id == scope.agent


def storage_chat(scope: Scope, chat_id: str) -> str:
    """The stored id of the scope's chat `chat_id` (as a request names it). `InputError` for an id outside
    `brain.keys.check_id`'s grammar (every chat a request creates, a request can reach)."""
    check_id(chat_id, "chat_id")
    return chat_id if scope.agent is None else f"{AGENT_CHAT}{scope.agent}{_SEP}{chat_id}"


def check_new_chat(user_id: str | bytes, chat_id: str | bytes) -> None:
    """The ids of a chat about to be written through the Python API (a turn, added turns or knowledge, an
    archived message, an import): a str user id follows `brain.keys.check_id`; a str chat id too, or is an
    agent's stored chat id whose agent and chat do. Bytes ids (MetaGPT's keys) are opaque: the store checks
    their type and size. `InputError` naming the id; reading and erasing take any stored id."""
    if isinstance(user_id, str):
        check_id(user_id, "user_id")
    if not isinstance(chat_id, str):
        return
    owner = agent_chat(chat_id) if chat_id.startswith(AGENT_CHAT) else None
    if owner is not None:
        check_id(owner[0], "agent")
    check_id(owner[1] if owner is not None else chat_id, "chat_id")


def request_chat(scope: Scope, stored: str | bytes) -> str | None:
    """The chat id `scope` knows a stored chat of its user by, or None when the chat is not the scope's
    (another agent's, or a user-wide scope's view of an agent's) or no request could name it."""
    if not isinstance(stored, str):
        return None
    if scope.agent is None:
        chat_id = stored
    else:
        mine = f"{AGENT_CHAT}{scope.agent}{_SEP}"
        if not stored.startswith(mine):
            return None
        chat_id = stored[len(mine) :]
    return chat_id if chat_id and _plain(chat_id) else None


def agent_chat(stored: str | bytes) -> tuple[str, str] | None:
    """The (agent, chat id) of an agent's stored chat; None for a chat of no agent. For callers that hold
    only a stored id (e.g. a background worker naming the agent of the facts it extracts)."""
    if not isinstance(stored, str) or not stored.startswith(AGENT_CHAT):
        return None
    agent, sep, chat_id = stored[len(AGENT_CHAT) :].rpartition(_SEP)
    return (agent, chat_id) if sep and agent and chat_id and _plain(chat_id) else None


def _plain(text: str) -> bool:
    """No control character (C0, DEL, C1) and no lone surrogate."""
    return not any(unicodedata.category(c) in ("Cc", "Cs") for c in text)
