"""Safe retries: a call retried with the same message id never stores its turn twice and gives the stored
answer; a committed turn is reported as committed when a step after its write fails."""

from __future__ import annotations

import asyncio

import pytest

from brain import MemoryBackend, Settings, local_runtime
from brain.errors import InputError, StoreError
from brain.testing import ScriptedLLM, tool_calls
from roles import Assistant


def assistant_with(llm: ScriptedLLM, mode: str = "brain") -> tuple[Assistant, MemoryBackend]:
    settings = Settings.model_validate({"memory": {"mode": mode}})
    backend = MemoryBackend(prefix=settings.redis.key_prefix)
    return Assistant.for_runtime(local_runtime(llm, settings=settings, backend=backend)), backend


@pytest.mark.parametrize(
    ("mode", "reply"),
    [("brain", "Hello Ann."), ("tiered", tool_calls(("send_message", {"message": "Hello Ann."})))],
)
async def test_a_retried_call_gives_the_stored_answer_without_a_model_call(mode: str, reply: object) -> None:
    llm = ScriptedLLM([reply])  # type: ignore[list-item]  # one reply: a second call would fail loudly
    assistant, _ = assistant_with(llm, mode)
    first = await assistant.chat("ann", "c1", "Hi, I am Ann.", message_id="req-1")
    again = await assistant.chat("ann", "c1", "Hi, I am Ann.", message_id="req-1")
    streamed = [p async for p in assistant.chat_stream("ann", "c1", "Hi, I am Ann.", message_id="req-1")]
    assert first == again == "".join(streamed) == "Hello Ann."
    memory = await assistant.memory_of("ann", "c1")
    assert [m.content for m in memory.history] == ["Hi, I am Ann.", "Hello Ann."]
    assert [m.id for m in memory.history] == ["req-1", "req-1:answer"]
    assert len(llm.calls) == 1


async def test_racing_retries_store_one_turn() -> None:
    llm = ScriptedLLM(["Hello Ann.", "Hello again Ann."])
    assistant, _ = assistant_with(llm)
    answers = await asyncio.gather(*(assistant.chat("ann", "c1", "Hi", message_id="req-7") for _ in range(2)))
    memory = await assistant.memory_of("ann", "c1")
    assert [m.id for m in memory.history] == ["req-7", "req-7:answer"]  # one turn whoever won
    assert memory.history[1].content in answers


async def test_other_message_ids_and_none_are_new_turns() -> None:
    llm = ScriptedLLM(["One.", "Two.", "Three.", "Four."])
    assistant, _ = assistant_with(llm)
    await assistant.chat("ann", "c1", "Hi", message_id="a")
    await assistant.chat("ann", "c1", "Hi", message_id="b")
    await assistant.chat("ann", "c1", "Hi")
    assert len((await assistant.memory_of("ann", "c1")).history) == 6
    assert await assistant.chat("ann", "c2", "Hi", message_id="a") == "Four."  # ids are per chat


async def test_a_bad_message_id_is_refused_before_anything() -> None:
    llm = ScriptedLLM([])
    assistant, _ = assistant_with(llm)
    for bad in ("", " a", "a/b", "x" * 257):
        with pytest.raises(InputError, match="message_id"):
            await assistant.chat("ann", "c1", "Hi", message_id=bad)
    assert llm.calls == []


async def test_a_committed_turn_is_not_failed_by_a_step_after_its_write(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    llm = ScriptedLLM(["Hello Ann."])
    assistant, backend = assistant_with(llm)
    push, failures = backend.queue.push, []

    async def flaky(*args: object) -> None:
        if not failures:
            failures.append(args)
            raise StoreError("Redis XADD failed: ConnectionError: zq-secret-host:6379")
        await push(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(backend.queue, "push", flaky)
    assistant.engine.after_commit.first_delay = 0.01
    with caplog.at_level("WARNING", logger="brain.turns"):
        assert await assistant.chat("ann", "c1", "Hi, I am Ann.", message_id="m1") == "Hello Ann."
    assert await assistant.pending("ann", "c1") is None  # committed, nothing pending
    for _ in range(100):
        if not assistant.engine.after_commit.retrying:
            break
        await asyncio.sleep(0.01)
    assert await backend.queue.backlog() == 1  # pushed again in the background
    assert "queueing for facts" in caplog.text and "zq-secret-host" not in caplog.text
