"""Context pressure: prompts always fit the window and stay well formed (property-based)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from brain.llm.protocol import ChatMessage, ToolCall
from brain.llm.tokens import OFFLINE_ENCODING, Tokenizer
from brain.memory.context import fit_prompt, is_well_formed, pressure_note, prompt_tokens

TOK = Tokenizer.for_model("", OFFLINE_ENCODING)
TEXT = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=0x2FF), max_size=3_000)


@st.composite
def conversations(draw: st.DrawFn) -> tuple[list[ChatMessage], int]:
    head = [ChatMessage(role="system", content=draw(TEXT)) for _ in range(draw(st.integers(1, 3)))]
    body: list[ChatMessage] = []
    for g in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["user", "assistant", "tools"]))
        if kind == "tools":
            calls = tuple(
                ToolCall(id=f"c{g}-{i}", name="search", arguments=draw(st.text(max_size=200)))
                for i in range(draw(st.integers(1, 3)))
            )
            body.append(ChatMessage(role="assistant", content=draw(st.none() | TEXT), tool_calls=calls))
            body += [ChatMessage(role="tool", tool_call_id=c.id, content=draw(TEXT)) for c in calls]
        else:
            body.append(ChatMessage(role=kind, content=draw(TEXT)))
    body.append(ChatMessage(role="user", content=draw(TEXT)))
    return head + body, len(head)


@settings(max_examples=150, deadline=None)
@given(conversations(), st.integers(min_value=128, max_value=3_000), st.integers(min_value=0, max_value=64))
def test_prompt_always_fits_and_stays_well_formed(
    conv: tuple[list[ChatMessage], int], window: int, reserve: int
) -> None:
    messages, head = conv
    assert is_well_formed(messages)
    fitted = fit_prompt(messages, window, TOK, head=head, reserve=reserve)
    assert prompt_tokens(fitted, TOK) <= window - reserve
    assert is_well_formed(fitted)
    assert [m.role for m in fitted[:head]] == ["system"] * head  # the head is never evicted
    assert fitted[-1].role == "user"  # nor the newest message
    kept_body = fitted[head:-1]
    assert all(m in messages for m in kept_body)  # older turns are kept whole or not at all
    if prompt_tokens(messages, TOK) <= window - reserve:
        assert fitted == messages  # nothing is touched when it already fits


def test_oldest_turns_go_first_and_tool_calls_leave_with_their_results() -> None:
    call = ToolCall(id="c1", name="search", arguments="{}")
    messages = [
        ChatMessage(role="system", content="sys"),
        ChatMessage(role="user", content="old " * 200),
        ChatMessage(role="assistant", content=None, tool_calls=(call,)),
        ChatMessage(role="tool", tool_call_id="c1", content="result " * 200),
        ChatMessage(role="assistant", content="recent answer"),
        ChatMessage(role="user", content="new question"),
    ]
    fitted = fit_prompt(messages, 150, TOK)
    assert [m.content for m in fitted] == ["sys", "recent answer", "new question"]
    assert is_well_formed(fitted)
    assert not is_well_formed(messages[2:3]) and not is_well_formed([messages[3]])


def test_pressure_note() -> None:
    assert pressure_note(700, 1_000, 0.75) is None
    note = pressure_note(800, 1_000, 0.75)
    assert note is not None and note.role == "system" and "80%" in (note.content or "")
