"""BrainMemory's behaviour on the in-memory store (the contract suite shows the stores agree)."""

from __future__ import annotations

import pytest

from actions.summarizer import Summarizer
from brain import BrainMemory, InMemoryStore, InputError, LLMError, MemorySettings, Message, StoreError
from brain.llm.usage import Usage
from brain.memory.window import Window
from brain.storage.conversation import Conversation, StoredState, WriteBatch, WriteResult
from brain.testing import ScriptedLLM


class BrokenStore(InMemoryStore):
    """Fails reads or writes on demand, like a Redis that went away."""

    def __init__(self) -> None:
        super().__init__()
        self.fail_reads = self.fail_writes = False

    async def load(
        self, conv: Conversation, *, window_turns: int, knowledge_items: int, pending: str | None = None
    ) -> StoredState:
        if self.fail_reads:
            raise StoreError("loading failed: connection refused")
        return await super().load(
            conv, window_turns=window_turns, knowledge_items=knowledge_items, pending=pending
        )

    async def write(self, conv: Conversation, batch: WriteBatch) -> WriteResult:
        if self.fail_writes:
            raise StoreError("writing failed: connection reset")
        return await super().write(conv, batch)


async def load(store: InMemoryStore, chat: str = "c", **settings: object) -> BrainMemory:
    return await BrainMemory.loads(store, "u", chat, settings=MemorySettings.model_validate(settings))


async def test_turns_persist_with_roles_and_dirty_clears_after_write() -> None:
    store = InMemoryStore()
    memory = await load(store)
    memory.add_talk(Message(content="Hi, I am Ann", role="system"))
    memory.add_answer(Message(content="Hello Ann"))
    assert memory.is_dirty and memory.last_history_id == memory.history[-1].id
    assert await memory.dumps() and not memory.is_dirty
    again = await load(store)
    assert [(m.role, m.content) for m in again.history] == [
        ("user", "Hi, I am Ann"),
        ("assistant", "Hello Ann"),
    ]
    assert again.turn_count == 2 and not again.is_dirty


async def test_failed_write_keeps_everything_pending_and_retry_works() -> None:
    store = BrokenStore()
    memory = await load(store)
    memory.add_talk(Message(content="one"))
    store.fail_writes = True
    with pytest.raises(StoreError):
        await memory.dumps()
    assert memory.is_dirty
    store.fail_writes = False
    assert await memory.dumps() and not memory.is_dirty
    assert [m.content for m in (await load(store)).history] == ["one"]


async def test_failed_read_is_an_error_not_an_empty_memory() -> None:
    store = BrokenStore()
    memory = await load(store)
    memory.add_talk(Message(content="precious"))
    await memory.dumps()
    store.fail_reads = True
    with pytest.raises(StoreError):
        await load(store)
    store.fail_reads = False
    assert (await load(store)).history[0].content == "precious"


async def test_uncacheable_memory_writes_nothing() -> None:
    store = InMemoryStore()
    memory = await load(store)
    memory.cacheable = False
    memory.add_talk(Message(content="x"))
    assert await memory.dumps() is False and memory.is_dirty
    assert not (await load(store)).history


async def test_same_message_twice_is_stored_once_and_ids_of_any_form_are_kept() -> None:
    store = InMemoryStore()
    memory = await load(store)
    m = Message(id="1", content="numeric id")
    memory.add_talk(m)
    memory.add_talk(m)
    memory.add_talk(Message(content="uuid id"))  # MetaGPT dropped this after a numeric id (W9)
    memory.add_talk(Message(id="0", content="smaller numeric id"))
    await memory.dumps()
    again = await load(store)
    again.add_talk(m)  # known from the store
    assert not again.is_dirty
    assert [x.content for x in again.history] == ["numeric id", "uuid id", "smaller numeric id"]


async def test_last_talk_survives_until_the_answer_commits() -> None:
    store = InMemoryStore()
    memory = await load(store)
    memory.set_last_talk("What is the capital of Norway?")
    await memory.dumps()
    talk = memory.pop_last_talk()
    assert talk == "What is the capital of Norway?" and memory.last_talk is None
    await memory.dumps()  # e.g. the LLM failed: nothing answered yet
    assert (await load(store)).last_talk == talk  # a restart can retry the turn
    memory.restore_last_talk()
    assert memory.pop_last_talk() == talk  # and so can this process
    memory.add_talk(Message(content=talk))
    memory.add_answer(Message(content="Oslo"))
    await memory.dumps()
    assert (await load(store)).last_talk is None


async def test_knowledge() -> None:
    store = InMemoryStore()
    memory = await load(store)
    memory.add_knowledge(Message(id="k", content="Ann is vegetarian"))
    memory.add_knowledge(Message(id="k", content="Ann is vegetarian"))
    memory.add_knowledge(Message(content="Ann lives in Oslo"))
    await memory.dumps()
    assert (await load(store)).get_knowledge() == "Ann is vegetarian\nAnn lives in Oslo"


async def test_history_text_has_speaker_labels_and_omits_the_current_talk() -> None:
    memory = await load(InMemoryStore())
    memory.historical_summary = "Ann likes tea."
    memory.add_talk(Message(content="I am Ann"))
    memory.add_answer(Message(content="Hi Ann", sent_from="Lily"))
    memory.add_talk(Message(content="current question"))
    assert (
        memory.history_text == "Summary of earlier conversation: Ann likes tea.\nUser: I am Ann\nLily: Hi Ann"
    )
    assert memory.exists("Hi Ann") and not memory.exists("nope")
    assert memory.is_history_available


async def test_bad_input_is_refused_clearly() -> None:
    memory = await load(InMemoryStore(), max_message_bytes=10)
    with pytest.raises(InputError, match="expected a brain Message, got str"):
        memory.add_talk("not a message")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="max_message_bytes is 10"):
        memory.add_talk(Message(content="x" * 11))
    with pytest.raises(InputError, match="must not be empty"):
        await BrainMemory.loads(InMemoryStore(), "", "c")
    with pytest.raises(StoreError, match="not bound to a store"):
        BrainMemory().add_talk(Message(content="x")) or await BrainMemory(is_dirty=True).dumps()


def test_extract_info_and_split_texts() -> None:
    assert BrainMemory.extract_info("[SKILL]: text_to_image\nof a cat") == (
        "SKILL",
        "text_to_image\nof a cat",
    )
    assert BrainMemory.extract_info("plain text") == (None, "plain text")
    parts = BrainMemory.split_texts("word " * 100, 30)
    assert len(parts) == 4 and "".join(parts) == "word " * 100


async def test_title_does_not_touch_history() -> None:
    store = InMemoryStore()
    memory = await load(store)
    memory.add_talk(Message(content="Plan my trip to Norway"))
    memory.add_answer(Message(content="Sure"))
    await memory.set_title("  Norway trip planning ")
    assert memory.title == "Norway trip planning"
    assert len(memory.history) == 2
    again = await load(store)
    assert again.title == "Norway trip planning" and len(again.history) == 2


async def test_a_summary_is_due_when_the_unsummarized_turns_leave_the_window() -> None:
    memory = await load(InMemoryStore())
    for i in range(10):
        memory.add_talk(Message(content=f"message number {i} " * 10))
    await memory.dumps()
    tokens = 10 * (memory.tokenizer.count("message number 0 " * 10) + 4)
    assert memory.window_tokens == tokens
    assert memory.summary_due(Window(turns=9, tokens=100_000))  # too many turns
    assert memory.summary_due(Window(turns=100, tokens=tokens - 1))  # too many tokens
    assert not memory.summary_due(Window(turns=10, tokens=tokens))


async def test_a_summary_keeps_the_newest_turns_that_fit_the_kept_window() -> None:
    store = InMemoryStore()
    memory = await load(store)
    for i in range(10):
        memory.add_talk(Message(content=f"turn {i}"))
    await memory.dumps()
    llm = ScriptedLLM(["turns 0 to 5"])
    await memory.summarize(Summarizer(llm), keep_recent=Window(turns=4, tokens=10_000))
    assert "turn 5" in llm.calls[0].prompt_text and "turn 6" not in llm.calls[0].prompt_text
    again = await load(store)
    assert again.summary_upto == 6 and [m.content for m in again.history] == [
        f"turn {i}" for i in range(6, 10)
    ]
    assert not again.summary_due(Window(turns=4, tokens=10_000))


async def test_llm_errors_from_summarize_leave_memory_unchanged() -> None:
    store = InMemoryStore()
    memory = await load(store)
    memory.set_last_talk("pending")
    for i in range(6):
        memory.add_talk(Message(content=f"fact {i}"))
    await memory.dumps()
    for failure in (LLMError("HTTP 500"), "   ", "word " * 2000):
        llm = ScriptedLLM([failure])
        with pytest.raises(LLMError):
            await memory.summarize(Summarizer(llm))
        again = await load(store)
        assert (again.historical_summary, len(again.history), again.last_talk) == ("", 6, "pending")
        assert (memory.historical_summary, len(memory.history), memory.summary_upto) == ("", 6, 0)


async def test_a_copy_counts_its_own_pending_usage_and_memories_do_not_share_state() -> None:
    first, second = BrainMemory(), BrainMemory()
    assert first._s is not second._s and first._s.pending is not second._s.pending
    copied = first.model_copy()
    copied.add_usage(2, Usage(prompt_tokens=3, completion_tokens=4))
    assert (copied._s.pending_calls, first._s.pending_calls) == (2, 0)
    store = InMemoryStore()
    memory = await BrainMemory.loads(store, "u", "c", settings=MemorySettings(max_message_bytes=10))
    with pytest.raises(InputError, match="max_message_bytes is 10"):  # its own settings, not the default
        memory.add_talk(Message(content="x" * 11))
    assert BrainMemory()._s.settings.max_message_bytes > 10
