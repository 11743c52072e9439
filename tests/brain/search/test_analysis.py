"""Language-aware analysis: Chinese, Korean, accents, dates and months; and the Lua scoring agrees with a
BM25 computed in Python from the same terms."""

from __future__ import annotations

import math

import redis.asyncio as aioredis

from brain.keys import archival_base
from brain.search.analysis import bm25, fuse, searchable, terms
from brain.search.dates import dated_text
from brain.search.index import IndexedDoc, SearchIndex


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
        assert set(terms(form)) == day, form
    assert set(terms("Feb 7")) == {february, "7"} == set(terms("2月7日"))
    assert terms("the cake she made in May 2022") == ["cake", "made", "may", "2022"]  # May is a month
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


def test_fuse_by_score() -> None:
    lexical, vector = [("a", 10.0), ("b", 5.0)], [("b", 0.9), ("c", 0.45)]
    fused = dict(fuse(lexical, vector, weight=0.5))
    assert math.isclose(fused["a"], 0.5) and math.isclose(fused["b"], 0.75) and math.isclose(fused["c"], 0.25)
    assert fuse(lexical, [], weight=0.2)[0][0] == "a"  # no vector ranking: the lexical order stays
    assert fuse(lexical, vector, linked=["c"], link_weight=1.0)[0][0] == "c"


CORPUS = [
    "Ann drinks coffee in Beijing every morning.",
    "我喜欢喝咖啡，住在北京，爱吃寿司。",
    "Coffee, coffee and more coffee: the café on 2022-02-07.",
    "北京的咖啡馆很多，寿司店也不少。",
    "Bea baked a cake for the farewell.",
]


async def test_lua_scores_the_terms_python_computes(redis_client: aioredis.Redis) -> None:
    """Postings hold exactly `terms` of each text, and the script's scores are BM25 over them."""
    index = SearchIndex(redis_client, archival_base("brain", "agree"))
    docs = [IndexedDoc(id=f"d{i}", text=t, ts=1_644_192_000 + i) for i, t in enumerate(CORPUS)]
    await index.add_many(docs)
    for doc in docs:
        for term in set(terms(doc.text)):
            assert await redis_client.zscore(f"{index.base}:post:{term}", doc.id) == terms(doc.text).count(
                term
            )
    analysed = [terms(t) for t in CORPUS]
    avg = sum(map(len, analysed)) / len(analysed)
    for query in ("coffee in Beijing", "咖啡 北京 寿司", "café 2022年2月7日", "baked cakes"):
        expected = {}
        for doc, doc_terms in zip(docs, analysed, strict=True):
            score = sum(
                bm25(doc_terms.count(t), sum(t in d for d in analysed), len(docs), len(doc_terms), avg)
                for t in set(terms(query))
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
    index = SearchIndex(redis_client, archival_base("brain", "zh"))
    await index.add_many([IndexedDoc(id=f"d{i}", text=t) for i, t in enumerate(CORPUS)])
    for word in ("咖啡", "北京", "寿司"):
        hits, _ = await index.search(word)
        assert {"d1", "d3"} <= {h.doc.id for h in hits}, word
    hits, _ = await index.search("cafe")
    assert [h.doc.id for h in hits] == ["d2"]  # café, folded


async def test_a_dated_index_finds_a_day_however_it_is_written(redis_client: aioredis.Redis) -> None:
    index = SearchIndex(redis_client, archival_base("brain", "dated"), dated=True)
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
