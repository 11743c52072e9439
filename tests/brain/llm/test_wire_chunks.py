"""`ChunkReader`: the quick reading of a text chunk is the general reading, for every shape a chunk has;
the chunks of a stream that came together go on as one piece of text (`OpenAILLM.stream`)."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from brain.llm.openai_client import _joined
from brain.llm.wire import ChunkReader, MalformedReply

_ODD = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=5), st.lists(st.none(), max_size=1)
)
_TEXT = st.one_of(st.none(), st.text(max_size=8), _ODD)
_CALLS = st.one_of(st.none(), st.just([]), st.just(""), st.just([{"index": 0}]), _ODD)
_DELTA = st.one_of(
    st.fixed_dictionaries({"content": _TEXT}, optional={"role": st.just("assistant"), "tool_calls": _CALLS}),
    st.fixed_dictionaries({}, optional={"tool_calls": _CALLS}),
    _ODD,
)
_CHOICE = st.one_of(
    st.fixed_dictionaries(
        {"delta": _DELTA, "finish_reason": st.one_of(st.none(), st.just("stop"), _TEXT)},
        optional={"index": st.just(0)},
    ),
    st.fixed_dictionaries({}, optional={"delta": _DELTA}),
    _ODD,
)
_CHUNK = st.one_of(
    st.fixed_dictionaries(
        {"choices": st.one_of(st.lists(_CHOICE, min_size=1, max_size=2), _ODD)},
        optional={"usage": st.one_of(st.none(), st.just({"prompt_tokens": 3, "completion_tokens": 1}), _ODD)},
    ),
    _ODD,
)


def _read(feed: Any, reader: ChunkReader, chunk: Any) -> Any:
    try:
        events = feed(chunk)
    except MalformedReply as exc:
        return ("refused", str(exc))
    return (events, reader.parts, reader.finish_reason, reader.usage)


@settings(max_examples=1000, deadline=None)
@given(st.lists(_CHUNK, min_size=1, max_size=4))
@example([{"choices": [{"delta": {"content": "x"}, "finish_reason": "stop"}]}])
@example([{"choices": [{"delta": {"content": "x", "tool_calls": [{"index": 0}]}, "finish_reason": None}]}])
@example([{"choices": [{"delta": {"content": "x"}, "finish_reason": None}], "usage": {"prompt_tokens": 1}}])
def test_the_quick_reading_is_the_general_one(chunks: list[Any]) -> None:
    quick, general = ChunkReader(), ChunkReader()
    for chunk in chunks:
        assert _read(quick._feed, quick, chunk) == _read(general._general, general, chunk)


def test_a_text_chunk_is_read_quickly() -> None:
    reader = ChunkReader()
    chunk = {"choices": [{"index": 0, "delta": {"content": "行李"}, "finish_reason": None}]}
    assert [e.text for e in reader.feed(chunk)] == ["行李"]  # type: ignore[union-attr]
    assert reader.content == "行李" and reader.finish_reason is None


def _chunk(text: str | None = None, calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    delta: dict[str, Any] = {"content": text}
    if calls is not None:
        delta["tool_calls"] = calls
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}


def test_chunks_that_came_together_go_on_together() -> None:
    call = [{"index": 0, "id": "c1", "function": {"name": "f", "arguments": "{}"}}]
    batch = [_chunk("a"), _chunk("b"), _chunk(None, call), _chunk("c"), _chunk(""), _chunk("d")]
    reader = ChunkReader()
    events = _joined(reader, batch)
    assert [(type(e).__name__, getattr(e, "text", None)) for e in events] == [
        ("TextDelta", "ab"),
        ("ToolCallDelta", None),
        ("TextDelta", "cd"),
    ]
    assert reader.content == "abcd" and reader.tool_calls[0].name == "f"
    one = _chunk("x")
    assert _joined(ChunkReader(), [one]) == ChunkReader().feed(one)
