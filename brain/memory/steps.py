"""The steps of a turn kept as turns: what the agent did between the question and its answer (MemGPT keeps
every step). A step is the model's tool calls with its inner thoughts, then each call's result; stored as
messages of their own (`cause_by` `STEP` and `RESULT`) between the question and the answer, so the next
turns, recall search, `/dump` and the inspector see them. Their `content` is readable text (what recall
indexes and what tokens are counted from); `metadata` keeps the calls, so a prompt gets them back as the
model wrote them. The user's reply text never includes them. Pure functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from brain.llm.protocol import ChatMessage, ToolCall
from brain.message import Message
from brain.storage.conversation import Turn

__all__ = ["RESULT", "STEP", "STEPS", "as_chat", "exchange_turns", "is_step", "kept_steps"]

STEP = "ToolStep"
"""`cause_by` of an assistant message holding tool calls (and the inner thoughts said with them)."""
RESULT = "ToolResult"
"""`cause_by` of a tool's result."""
STEPS = frozenset((STEP, RESULT))
"""The `cause_by` of a kept step (`is_step`, for a loop over many messages)."""


def is_step(message: Message) -> bool:
    """Whether `message` is a kept step (a call or a result), not the user's words or an answer."""
    return message.cause_by in STEPS


def kept_steps(
    trail: Sequence[ChatMessage],
    *,
    sent_from: str,
    hidden: frozenset[str] = frozenset(),
    ids: str | None = None,
) -> list[Message]:
    """The tool rounds of a turn (`trail`: assistant messages with calls, then the tools' results) as
    messages to store. Calls named in `hidden` (e.g. `send_message`, whose text is the answer itself) are
    left out with their results; a step left without calls or thoughts is dropped. With `ids`, message ids
    are `<ids>:step<n>` (a retried turn stores its steps once)."""
    kept: list[Message] = []
    dropped: set[str] = set()
    for message in trail:
        if message.role == "assistant":
            calls = [c for c in message.tool_calls if c.name not in hidden]
            dropped |= {c.id for c in message.tool_calls if c.name in hidden}
            thought = (message.content or "").strip()
            if not calls and not thought:
                continue
            lines = [thought] if thought else []
            lines += [f"→ {c.name}({c.arguments})" for c in calls]
            metadata: dict[str, Any] = {
                "thought": thought,
                "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls],
            }
            kept.append(_message("assistant", "\n".join(lines), sent_from, STEP, metadata, ids, len(kept)))
        elif message.role == "tool" and message.tool_call_id not in dropped:
            name = _name_of(trail, message.tool_call_id)
            result = message.content or ""
            metadata = {"tool_call_id": message.tool_call_id or "", "name": name}
            kept.append(_message("tool", f"{name} → {result}", name, RESULT, metadata, ids, len(kept)))
    return kept


def _message(
    role: str, content: str, sent_from: str, cause: str, metadata: dict[str, Any], ids: str | None, n: int
) -> Message:
    extra = {"id": f"{ids}:step{n}"} if ids else {}
    return Message(
        role=role, content=content, sent_from=sent_from, cause_by=cause, metadata=metadata, **extra
    )


def _name_of(trail: Sequence[ChatMessage], call_id: str | None) -> str:
    for message in trail:
        for call in message.tool_calls:
            if call.id == call_id:
                return call.name
    return "tool"


def as_chat(message: Message) -> ChatMessage:
    """A stored message as a prompt message: a step with its calls as the model made them, a result as
    the tool's answer to its call, anything else by its role."""
    if message.cause_by == STEP:
        calls = tuple(ToolCall(**c) for c in message.metadata.get("tool_calls", ()))
        return ChatMessage(
            role="assistant", content=message.metadata.get("thought") or None, tool_calls=calls
        )
    if message.cause_by == RESULT:
        call_id = str(message.metadata.get("tool_call_id", ""))
        result = message.content.split(" → ", 1)[-1]
        return ChatMessage(role="tool", tool_call_id=call_id, content=result)
    return ChatMessage(role="assistant" if message.role == "assistant" else "user", content=message.content)


def exchange_turns(turns: Sequence[Turn], n: int) -> tuple[int, int]:
    """How many of the newest `turns` (oldest first) form the newest `n` exchanges, and how many exchanges
    that is. An exchange is a question with the answers after it; a question without an answer (the newest
    turn) is an exchange of its own; answers with no question before them in `turns` are one. Pure."""
    end, done = len(turns), 0
    while done < n and end > 0:
        start = end
        while start > 0 and turns[start - 1].message.role != "user":
            start -= 1  # the exchange's answers
        end, done = max(start - 1, 0), done + 1  # and its question
    return len(turns) - end, done
