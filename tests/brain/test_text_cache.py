"""Text caches keep short texts only: a long text is analysed on every call and pinned nowhere."""

from __future__ import annotations

from brain.search import analysis, query
from brain.search.analysis import searchable, stem, terms
from brain.search.query import analyse_query
from brain.text_cache import LONGEST, text_cache

ASKED = 1_790_000_000.0


def test_a_short_text_is_computed_once_and_a_long_one_every_time() -> None:
    calls: list[tuple[str, int]] = []

    @text_cache(maxsize=8, longest=10)
    def length(text: str, times: int) -> int:
        calls.append((text, times))
        return len(text) * times

    assert [length("short", 2), length("short", 2), length("short", 3)] == [10, 10, 15]
    assert calls == [("short", 2), ("short", 3)]  # the other arguments are part of the key
    long = "x" * 11
    assert [length(long, 1), length(long, 1)] == [11, 11]
    assert calls[2:] == [(long, 1), (long, 1)]
    assert length.cache_info().currsize == 2  # type: ignore[attr-defined]


def test_the_analysis_caches_keep_no_long_text() -> None:
    long = "In May we packed boots for Oslo and 上周 we bought tea. " * (LONGEST // 40)
    assert len(long) > LONGEST
    caches = (analysis._query, query._analysed)
    before = [c.cache_info().currsize for c in caches]  # type: ignore[attr-defined]
    first, again = analyse_query(long, ASKED), analyse_query(long, ASKED)
    assert first == again and first is not again  # the same answer, computed twice
    assert first.span is not None and "boot" in first.weights
    assert searchable(long)
    assert [c.cache_info().currsize for c in caches] == before  # type: ignore[attr-defined]
    run = "我们为奥斯陆买了靴子和茶叶" * (LONGEST // 13 + 1)  # one run of Han characters, segmented each time
    sizes = analysis._han.cache_info().currsize  # type: ignore[attr-defined]
    assert terms(run) == terms(run) and "靴子" in terms(run)
    assert analysis._han.cache_info().currsize == sizes  # type: ignore[attr-defined]
    short = analyse_query("What did I pack in May?", ASKED)
    assert analyse_query("What did I pack in May?", ASKED) is short


def test_a_long_word_is_stemmed_as_a_short_one_is_without_being_kept() -> None:
    word = "un" + "believ" * 20 + "ing"
    before = stem.cache_info().currsize
    assert terms(f"{word} things") == [stem.__wrapped__(word, True)[:48], "thing"]
    assert stem.__wrapped__(word, True) == stem.__wrapped__(word, True).lower() != word
    assert stem.cache_info().currsize == before + 1  # "things" only
