"""Block memory's budgets: what messages cost, what the FIFO flushes, what blocks give up. Pure."""

from __future__ import annotations

from brain.llm.protocol import ChatMessage, ToolCall
from brain.llm.tokens import OFFLINE_ENCODING, Tokenizer
from brain.memory.blocks.budget import BlockText, fit_blocks, flush_count, message_tokens

TOKENIZER = Tokenizer.for_model("", OFFLINE_ENCODING)


def test_tool_calls_tool_results_and_reasoning_all_count() -> None:
    call = ToolCall(id="c1", name="search_flights", arguments='{"from": "Oslo", "to": "上海", "days": 3}')
    asked = ChatMessage(role="assistant", content=None, tool_calls=(call,))
    assert message_tokens(TOKENIZER, asked) > TOKENIZER.count(call.arguments) > 5
    result = ChatMessage(role="tool", tool_call_id="c1", content="3 flights found " * 20)
    assert message_tokens(TOKENIZER, result) > 60
    plain = ChatMessage(role="assistant", content="ok")
    assert message_tokens(TOKENIZER, plain, "thinking it over " * 10) > message_tokens(TOKENIZER, plain) + 25


def test_nothing_flushes_while_the_history_fits() -> None:
    assert flush_count(["user", "assistant"], [10, 10], threshold=20, flush_size=5) == 0


def test_a_flush_takes_at_least_flush_size_and_leaves_a_history_starting_with_the_user() -> None:
    roles = ["user", "assistant", "tool", "assistant", "user", "assistant", "user", "assistant"]
    count = flush_count(roles, [10] * 8, threshold=70, flush_size=15)
    assert count == 4 and roles[count] == "user"  # 20 tokens reach flush_size; the tool round goes along
    count = flush_count(roles, [10] * 8, threshold=30, flush_size=5)
    assert count == 6 and sum([10] * 2) <= 30


def test_when_everything_would_go_the_newest_exchange_stays() -> None:
    roles = ["user", "assistant", "user", "assistant", "tool", "assistant"]
    assert flush_count(roles, [10, 10, 10, 10, 10, 10], threshold=15, flush_size=5) == 2
    assert flush_count(["assistant", "tool"], [50, 50], threshold=10, flush_size=5) == 1


def block(name: str, priority: int, tokens: int) -> BlockText:
    return BlockText(name, priority, "x " * tokens, tokens)


def test_blocks_are_given_up_in_ascending_priority_and_priority_zero_never() -> None:
    blocks = [block("static", 0, 50), block("facts", 1, 30), block("recall", 2, 30)]
    assert [b.name for b in fit_blocks(blocks, 0, 200, TOKENIZER)] == ["static", "facts", "recall"]
    assert [b.name for b in fit_blocks(blocks, 100, 200, TOKENIZER)] == ["static", "recall"]
    assert [b.name for b in fit_blocks(blocks, 140, 200, TOKENIZER)] == ["static"]
    assert [b.name for b in fit_blocks(blocks, 1_000, 200, TOKENIZER)] == ["static"]


def test_a_block_that_can_be_cut_is_cut_before_it_is_dropped() -> None:
    def cut(content: str, tokens: int) -> str | None:
        return TOKENIZER.truncate(content, TOKENIZER.count(content) - tokens)

    facts = "fact " * 40
    blocks = [block("static", 0, 10), BlockText("facts", 1, facts, TOKENIZER.count(facts), cut)]
    kept = fit_blocks(blocks, 100, 131, TOKENIZER)
    assert [b.name for b in kept] == ["static", "facts"]
    assert 100 + sum(b.tokens for b in kept) <= 131 and kept[1].content.startswith("fact fact")
