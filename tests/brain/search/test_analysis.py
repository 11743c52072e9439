"""Language-aware analysis: Chinese, Korean, accents, dates and months; and the Lua scoring agrees with a
BM25 computed in Python from the same terms."""

from __future__ import annotations

import math
import subprocess
import sys
from collections import Counter

import jieba
import pytest
import redis.asyncio as aioredis

from benchmarks.retrieval_dev.single_char import PROBES, distractors
from brain.backends.redis.index import RedisIndexStore
from brain.errors import StoreError
from brain.keys import archival_base
from brain.search import analyses
from brain.search.analysis import (
    ANALYSIS,
    CHAR_WEIGHT,
    DATED,
    STOPWORDS,
    bm25,
    fuse,
    query_weights,
    searchable,
    term_counts,
    terms,
)
from brain.search.dates import dated_text
from brain.search.index import IndexedDoc
from tests.support.stores import redis_index


def test_dates_in_every_form_meet() -> None:
    february = terms("February")[0]
    day = {"7", february, "2022"}
    forms = (
        "7 February 2022",
        "February 7th, 2022",
        "2022-02-07",
        "2022/2/7",
        "2022年2月7日",
        "2022年02月07号",
    )
    for form in forms:
        assert set(terms(form)) == day | {DATED}, form  # a text telling a day
    assert set(terms("Feb 7")) == {february, "7", DATED} == set(terms("2月7日"))
    assert terms("the cake she made in May 2022") == ["cake", "make", "may", "2022", DATED]  # May is a month
    assert terms("她五月去了成都")[:1] == ["may"] and terms("十二月") == terms("December")
    assert terms(dated_text("Ann: hello", 1_644_192_000)) == ["7", february, "2022", "ann", "hello"]
    assert dated_text("我们去了成都", 1_644_192_000).startswith("[2022年2月7日]")


def test_chinese_korean_accents_and_stems() -> None:
    sentence = terms("我喜欢喝咖啡，住在北京，爱吃寿司")
    assert {"咖啡", "北京", "寿司"} <= set(sentence)  # one clause was one term before
    assert "的" not in terms("我的咖啡") and not searchable("的了吗")
    assert set(terms("서울")) <= set(terms("서울에서 커피를 마셨다"))
    assert terms("café naïve Zürich") == terms("cafe naive zurich")
    assert terms("baked cakes") == terms("bake cake") and terms("stories") == terms("story")
    assert terms("Ann's trips!") == ["ann", "trip"]


def test_the_characters_of_longer_chinese_words_are_terms_too() -> None:
    assert {"猫咪", "猫"} <= set(terms("我家的猫咪很可爱")) and "猫" not in terms("我家的猫咪", chars=False)
    assert {"绿茶", "茶"} <= set(terms("我喜欢喝绿茶")) and {"小狗", "狗"} <= set(terms("小狗在院子里"))
    assert terms("我养了一只猫").count("猫") == 1  # a word of one character is not counted twice
    assert "什" not in terms("他的狗叫什么") and "们" not in terms("我们")  # nor stop words' characters
    assert terms("猫") == ["猫"] and terms("Ann's cat") == terms("Ann's cat", chars=False)


@pytest.mark.parametrize("text", ["中华人民共和国的首都是北京", "我在图书馆借了书", "他的狗叫什么名字"])
def test_the_words_are_jiebas_search_mode_and_the_rest_their_characters(text: str) -> None:
    words = [w for w in jieba.cut_for_search(text) if w not in STOPWORDS]
    assert terms(text, chars=False) == words  # analysis "2"
    extra = Counter(terms(text))
    extra.subtract(words)
    assert min(extra.values()) == 0  # every word, as often
    assert all(len(t) == 1 and t in text for t in +extra)  # and the characters of the longer ones


def test_a_query_weighs_its_words_over_their_characters() -> None:
    assert 0 < CHAR_WEIGHT < 1
    assert query_weights("绿茶") == {"绿茶": 1.0, "绿": CHAR_WEIGHT, "茶": CHAR_WEIGHT}
    assert query_weights("猫") == {"猫": 1.0} and query_weights("的了吗") == {}
    assert query_weights("猫咪和猫")["猫"] == 1.0  # a character the query also has as a word weighs 1
    assert query_weights("他的狗叫什么") == {"狗叫": 1.0, "狗": CHAR_WEIGHT, "叫": CHAR_WEIGHT}
    assert query_weights("baked cakes in May") == dict.fromkeys(terms("baked cakes in May"), 1.0)
    assert set(query_weights("我家的猫咪很可爱")) == set(terms("我家的猫咪很可爱"))


def test_the_single_character_probes_share_only_their_character() -> None:
    """`benchmarks/retrieval_dev/single_char.py`: found only through a character inside a longer word."""
    for probe in PROBES:
        words = set(terms(probe.passage, chars=False))
        assert probe.char not in words and probe.char in terms(probe.passage), probe
        assert not words & set(terms(probe.query, chars=False)), probe
        assert probe.char in query_weights(probe.query), probe
    chars = {p.char for p in PROBES}
    assert len(chars) == len(PROBES) and len(distractors()) > 300
    assert not any(chars & set(terms(t, chars=False)) for t in distractors())


def test_every_known_analysis_gives_its_own_terms() -> None:
    ts, text = 1_644_192_000, "我家的猫咪 likes green tea"
    analysed = analyses.analysed
    assert ANALYSIS == "4" and {"1", "2", "2d", "3", "3d", "4", "4d", "4w", "4wt"} <= set(analyses.KNOWN)
    assert analysed(text, ts, "2") == dict(term_counts(text, chars=False))
    assert analysed(text, ts, "3") == dict(term_counts(text, level=3)) and "猫" in analysed(text, ts, "3")
    assert analysed(text, ts, "3d") == dict(term_counts(dated_text(text, ts), level=3))
    assert analysed(text, ts, "4") == dict(term_counts(text)) and "猫" in analysed(text, ts, "4")
    assert analysed(text, ts, "4d") == dict(term_counts(dated_text(text, ts)))
    told = "Ann bought mostly tea yesterday"
    assert analysed(told, ts, "3") == {"ann": 1, "bought": 1, "tea": 1, "yesterday": 1}
    assert analysed(told, ts, "4") == {"ann": 1, "buy": 1, "most": 1, "tea": 1, "yesterday": 1, DATED: 1}
    assert analysed(text, ts, "2d") == dict(term_counts(dated_text(text, ts), chars=False))
    assert "猫" not in analysed(text, ts, "2d") and "2022" in analysed(text, ts, "2d")
    with pytest.raises(StoreError, match="does not know"):
        analysed(text, ts, "5")


def test_fuse_by_score() -> None:
    lexical, vector = [("a", 10.0), ("b", 5.0)], [("b", 0.9), ("c", 0.45)]
    fused = dict(fuse(lexical, vector, weight=0.5))
    assert math.isclose(fused["a"], 0.5) and math.isclose(fused["b"], 0.75) and math.isclose(fused["c"], 0.25)
    assert fuse(lexical, [], weight=0.2)[0][0] == "a"  # no vector ranking: the lexical order stays
    assert fuse(lexical, vector, linked=["c"], link_weight=1.0)[0][0] == "c"


def test_fusion_by_range_spreads_close_cosines() -> None:
    lexical = [("a", 10.0), ("b", 8.0)]
    vector = [("b", 0.90), ("c", 0.86), ("a", 0.80)]  # all close together, as e5's are
    by_max = dict(fuse(lexical, vector, weight=0.5))
    by_range = dict(fuse(lexical, vector, weight=0.5, scale="range"))
    assert by_max["a"] > by_max["b"]  # /max: the vectors barely tell a from b
    assert by_range["b"] > by_range["a"]  # spread over [0, 1]: b's better cosine counts
    assert by_range["a"] == pytest.approx(0.5) and by_range["c"] == pytest.approx(0.5 * 0.6)
    assert fuse(lexical, [("x", 0.5)], scale="range") == fuse(lexical, [], scale="range")  # no spread


CORPUS = [
    "Ann drinks coffee in Beijing every morning.",
    "我喜欢喝咖啡，住在北京，爱吃寿司。",
    "Coffee, coffee and more coffee: the café on 2022-02-07.",
    "北京的咖啡馆很多，寿司店也不少。",
    "Bea baked a cake for the farewell.",
]


async def test_lua_scores_the_terms_python_computes(redis_client: aioredis.Redis) -> None:
    """Postings hold exactly `terms` of each text, and the script's scores are BM25 over them."""
    index = redis_index(redis_client, archival_base("brain", "agree"))
    docs = [IndexedDoc(id=f"d{i}", text=t, ts=1_644_192_000 + i) for i, t in enumerate(CORPUS)]
    await index.add_many(docs)
    store = index.store
    assert isinstance(store, RedisIndexStore)
    for doc in docs:
        for term in set(terms(doc.text)):
            assert (await store.postings(term))[doc.id] == terms(doc.text).count(term)
    analysed = [terms(t) for t in CORPUS]
    avg = sum(map(len, analysed)) / len(analysed)
    for query in (
        "coffee in Beijing",
        "咖啡 北京 寿司",
        "café 2022年2月7日",
        "baked cakes",
        "北京的咖啡馆",
        "啡",
    ):
        expected = {}
        for doc, doc_terms in zip(docs, analysed, strict=True):
            score = sum(
                weight
                * bm25(doc_terms.count(t), sum(t in d for d in analysed), len(docs), len(doc_terms), avg)
                for t, weight in query_weights(query).items()
                if t in doc_terms
            )
            if score:
                expected[doc.id] = score
        hits, total = await index.search(query, limit=10)
        assert total == len(expected), query
        for hit in hits:
            assert math.isclose(hit.score, expected[hit.doc.id], rel_tol=1e-9), (query, hit.doc.id)
        assert [h.doc.id for h in hits] == sorted(expected, key=lambda i: (-expected[i], i))


async def test_chinese_words_find_their_sentences(redis_client: aioredis.Redis) -> None:
    index = redis_index(redis_client, archival_base("brain", "zh"))
    await index.add_many([IndexedDoc(id=f"d{i}", text=t) for i, t in enumerate(CORPUS)])
    for word in ("咖啡", "北京", "寿司"):
        hits, _ = await index.search(word)
        assert {"d1", "d3"} <= {h.doc.id for h in hits}, word
    hits, _ = await index.search("cafe")
    assert [h.doc.id for h in hits] == ["d2"]  # café, folded


async def test_a_dated_index_finds_a_day_however_it_is_written(redis_client: aioredis.Redis) -> None:
    index = redis_index(redis_client, archival_base("brain", "dated"), dated=True)
    day = 1_644_253_200  # 2022-02-07 17:00 UTC
    await index.add_many(
        [
            IndexedDoc(id="feb7", text="Joanna: we watched a film tonight", ts=day),
            IndexedDoc(id="feb9", text="Joanna: we watched a film again", ts=day + 2 * 86_400),
            IndexedDoc(id="may", text="Joanna: the cake was a success", ts=day + 95 * 86_400),
            IndexedDoc(id="zh", text="李娜：我们今晚看了电影", ts=day),
        ]
    )
    for question in ("What film did Joanna watch on 7 February 2022?", "film Feb 7", "film on 2022-02-07"):
        hits, _ = await index.search(question, limit=1)
        assert hits[0].doc.id == "feb7", question
    hits, _ = await index.search("the cake in May", limit=1)
    assert hits[0].doc.id == "may"
    hits, _ = await index.search("2022年2月7日看了什么电影", limit=1)
    assert hits[0].doc.id == "zh"
    assert index.indexed_text(IndexedDoc(id="x", text="hi", ts=day)) == "[7 February 2022] hi"


async def test_a_character_finds_the_longer_words_it_is_in(redis_client: aioredis.Redis) -> None:
    """猫 finds 猫咪, 狗 小狗, 茶 绿茶; and 绿茶 still prefers 绿茶 over 绿 and 茶 apart."""
    index = redis_index(redis_client, archival_base("brain", "chars"), dated=True)
    texts = {
        "cat": "我家的猫咪很可爱",
        "dog": "小狗在院子里跑来跑去",
        "tea": "我喜欢喝绿茶",
        "apart": "窗外一片绿色，桌上一壶茶",
        "other": "我们明天去北京",
    }
    await index.add_many([IndexedDoc(id=i, text=t, ts=1_644_192_000) for i, t in texts.items()])
    for query, found in (
        ("猫", ["cat"]),
        ("狗", ["dog"]),
        ("谁的狗叫了", ["dog"]),
        ("绿茶", ["tea", "apart"]),
    ):
        hits, _ = await index.search(query)
        assert [h.doc.id for h in hits] == found, query
    hits, total = await index.search("茶")
    assert {h.doc.id for h in hits} == {"tea", "apart"} and total == 2
    hits, _ = await index.search("猫咪")
    assert [h.doc.id for h in hits] == ["cat"]


LAZY = """
import sys
from brain.search.analysis import terms
from actions.pointers import points_back
from brain.memory.graph.links import query_names
english = (terms("Packing for Oslo in May"), points_back("what about that one?"), query_names("Oslo trip"))
before = "jieba" in sys.modules
chinese = terms("五月去奥斯陆的行李")
print(before, "jieba" in sys.modules, "行李" in chinese)
"""


def test_the_segmenter_loads_at_the_first_han_text() -> None:
    run = subprocess.run([sys.executable, "-c", LAZY], capture_output=True, text=True, timeout=60, check=True)
    assert run.stdout.split() == ["False", "True", "True"]
