"""Context pressure: fit a prompt into the model's window. Pure.

The head (system prompt, core memory, summary) is never evicted. The oldest turns go first, and an assistant
message that called tools leaves together with the tool results that answer it, so the prompt stays well
formed for the OpenAI API. If the head and the newest message alone are too big, the longest contents are
cut, so the result always fits.
"""

from __future__ import annotations

from collections.abc import Sequence

from brain.llm.protocol import ChatMessage
from brain.llm.tokens import Tokenizer

__all__ = ["fit_prompt", "is_well_formed", "pressure_note", "prompt_tokens"]

PER_MESSAGE = 3
REPLY_PRIMING = 3


def prompt_tokens(messages: Sequence[ChatMessage], tokenizer: Tokenizer) -> int:
    """Tokens of a prompt as the OpenAI chat format counts them (contents, tool calls, framing)."""
    total = REPLY_PRIMING
    for m in messages:
        total += PER_MESSAGE + tokenizer.count(m.content or "")
        total += sum(
            tokenizer.count(c.name) + tokenizer.count(c.arguments) + PER_MESSAGE for c in m.tool_calls
        )
    return total


def pressure_note(used: int, window: int, share: float) -> ChatMessage | None:
    """A system note when the prompt passes `share` of the window."""
    if used <= share * window:
        return None
    return ChatMessage(
        role="system",
        content=(
            f"Memory pressure: the conversation fills {used * 100 // window}% of your context window. Save "
            "anything important to core or archival memory now; older messages will be summarized."
        ),
    )


def _groups(body: Sequence[ChatMessage]) -> list[list[ChatMessage]]:
    """Turns as units: an assistant tool call with its tool results, or a single message."""
    groups: list[list[ChatMessage]] = []
    for message in body:
        if message.role == "tool" and groups and groups[-1][0].tool_calls:
            groups[-1].append(message)
        elif message.role == "tool":
            continue  # an orphan result (its call was evicted earlier) is dropped, never sent alone
        else:
            groups.append([message])
    return groups


def fit_prompt(
    messages: Sequence[ChatMessage], window: int, tokenizer: Tokenizer, *, head: int = 1, reserve: int = 0
) -> list[ChatMessage]:
    """`messages` (the first `head` protected) cut to fit `window - reserve` tokens, well formed."""
    budget = max(window - reserve, 16)
    fixed, groups = list(messages[:head]), _groups(messages[head:])
    last = groups.pop() if groups else []
    size = prompt_tokens(fixed + last, tokenizer)
    kept: list[list[ChatMessage]] = []
    for group in reversed(groups):  # newest first
        cost = prompt_tokens(group, tokenizer) - REPLY_PRIMING
        if size + cost > budget:
            break
        kept.insert(0, group)
        size += cost
    result = fixed + [m for g in kept for m in g] + last
    while prompt_tokens(result, tokenizer) > budget:
        # Too big even with nothing old left: cut the longest content in half (the last resort).
        index = max(range(len(result)), key=lambda i: tokenizer.count(result[i].content or ""))
        content = result[index].content or ""
        if not content:
            break
        keep = max(tokenizer.count(content) // 2 - 1, 0)
        cut = tokenizer.truncate(content, keep) + ("…" if keep else "")
        result[index] = result[index].model_copy(update={"content": cut if cut.strip() else "…"})
        if keep == 0 and tokenizer.count(result[index].content or "") >= tokenizer.count(content):
            break
    return result


def is_well_formed(messages: Sequence[ChatMessage]) -> bool:
    """Every tool result answers a call of the assistant message right before its run of results, and
    every call is answered."""
    pending: set[str] = set()
    for message in messages:
        if message.role == "tool":
            if message.tool_call_id not in pending:
                return False
            pending.discard(message.tool_call_id)
            continue
        if pending:
            return False
        pending = {c.id for c in message.tool_calls} if message.role == "assistant" else set()
    return not pending
