"""The lexical index on both servers: ranking, filters, paging, isolation, deletion."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
import redis.asyncio as aioredis

from brain.errors import InputError, LLMError
from brain.keys import archival_base
from brain.search import index as search_index
from brain.search.analysis import bm25, reciprocal_rank_fusion, stem, terms
from brain.search.index import IndexedDoc, SearchIndex
from brain.search.query import Query, analyse_query
from brain.text_cache import LONGEST
from tests.support.stores import redis_index

DOCS = [
    IndexedDoc(id="a", text="Ann is vegetarian and loves spicy Thai curry.", tags=("food",), ts=100),
    IndexedDoc(
        id="b", text="The trip to Oslo is planned for May; hotels are booked.", tags=("travel",), ts=200
    ),
    IndexedDoc(id="c", text="Ann's sister Bea visits Oslo in June.", tags=("family", "travel"), ts=300),
    IndexedDoc(id="d", text="Curry recipes: green curry, red curry, massaman curry.", tags=("food",), ts=400),
]


def test_pure_parts() -> None:
    assert terms("The Hotels were BOOKED, Ann's trips!") == ["hotel", "book", "ann", "trip"]
    assert stem("stories") == stem("story") and stem("class") == "class" and stem("baked") == stem("bake")
    assert bm25(tf=2, df=1, n_docs=10, doc_len=5, avg_len=5) > bm25(
        tf=1, df=1, n_docs=10, doc_len=5, avg_len=5
    )
    assert bm25(tf=1, df=9, n_docs=10, doc_len=5, avg_len=5) < bm25(
        tf=1, df=1, n_docs=10, doc_len=5, avg_len=5
    )
    assert reciprocal_rank_fusion([["x", "y"], ["y", "z"]]) == [
        ("y", 1 / 62 + 1 / 61),
        ("x", 1 / 61),
        ("z", 1 / 62),
    ]


async def test_ranking_filters_paging(redis_client: aioredis.Redis) -> None:
    index = redis_index(redis_client, archival_base("brain", "user-1"))
    for doc in DOCS:
        assert await index.add(doc)
    assert not await index.add(DOCS[0])  # idempotent by id
    assert await index.count() == 4
    hits, total = await index.search("curry")
    assert [h.doc.id for h in hits] == ["d", "a"] and total == 2  # more occurrences rank first
    assert hits[0].score > hits[1].score > 0
    hits, _ = await index.search("Oslo hotels booked")
    assert hits[0].doc.id == "b"
    hits, total = await index.search("Oslo", tags=["family"])
    assert [h.doc.id for h in hits] == ["c"] and total == 1
    hits, _ = await index.search("Ann", start=250, end=350)
    assert [h.doc.id for h in hits] == ["c"]
    page1, total = await index.search("curry Oslo Ann", limit=2)
    page2, _ = await index.search("curry Oslo Ann", offset=2, limit=2)
    assert total == 4 and len({h.doc.id for h in page1 + page2}) == 4
    listed, total = await index.search("", start=150)
    assert [h.doc.id for h in listed] == ["d", "c", "b"] and total == 3  # newest first
    listed, _ = await index.search("", tags=["food"])
    assert [h.doc.id for h in listed] == ["d", "a"]
    assert (await index.get("b")) == DOCS[1]


async def test_tenants_are_isolated(redis_client: aioredis.Redis) -> None:
    alice, bob = (
        redis_index(redis_client, archival_base("brain", "alice")),
        redis_index(redis_client, archival_base("brain", "bob")),
    )
    await alice.add(IndexedDoc(id="1", text="alice secret launch code"))
    await bob.add(IndexedDoc(id="1", text="bob grocery list"))
    assert [h.doc.text for h in (await bob.search("secret launch code"))[0]] == []
    assert [h.doc.text for h in (await bob.search(""))[0]] == ["bob grocery list"]
    assert [h.doc.text for h in (await alice.search("grocery"))[0]] == []


async def test_delete_and_drop(redis_client: aioredis.Redis) -> None:
    index = redis_index(redis_client, archival_base("brain", "user-2"))
    for doc in DOCS:
        await index.add(doc)
    assert await index.delete("d") and not await index.delete("d")
    hits, _ = await index.search("curry")
    assert [h.doc.id for h in hits] == ["a"] and await index.count() == 3
    assert [h.doc.id for h in (await index.search("", tags=["food"]))[0]] == ["a"]
    other = redis_index(redis_client, archival_base("brain", "user-3"))
    await other.add(DOCS[0], [0.5, 0.5])
    await index.set_source("file.md", {"sha256": "x"})
    assert await index.drop() == 3
    assert await index.count() == 0 and (await index.search("Ann"))[1] == 0
    assert [k async for k in redis_client.scan_iter(match=index.base.replace("{", "[{]") + "*")] == []
    assert await other.count() == 1  # another tenant's index is untouched


async def test_add_many(redis_client: aioredis.Redis) -> None:
    index = redis_index(redis_client, archival_base("brain", "bulk"))
    assert await index.add_many(DOCS) == 4
    assert await index.add_many(DOCS[:2]) == 0  # already there
    assert await index.add_many([]) == 0
    assert [h.doc.id for h in (await index.search("curry"))[0]] == ["d", "a"]


async def test_vectors_and_hybrid_fusion(redis_client: aioredis.Redis) -> None:
    index = redis_index(redis_client, archival_base("brain", "vectors"))
    vectors = {"a": [1.0, 0.0, 0.0], "b": [0.0, 1.0, 0.0], "c": [0.0, 0.9, 0.1], "d": [0.7, 0.0, 0.7]}
    await index.add_many(DOCS, [vectors[d.id] for d in DOCS])
    nearest = await index.vector_search([0.0, 1.0, 0.0])
    assert [h.doc.id for h in nearest[:2]] == ["b", "c"] and nearest[0].score > 0.99
    assert [h.doc.id for h in await index.vector_search([0.0, 1.0, 0.0], tags=["family"])] == ["c"]
    hits, total = await index.search("curry", vector=[0.0, 1.0, 0.0], limit=4)
    ids = [h.doc.id for h in hits]
    assert total == 4 and ids[0] == "d"  # in both rankings: first after fusion
    assert ids.index("b") < ids.index("c")  # the vector ranking orders what the words do not match
    assert await index.delete("b")
    assert "b" not in [h.doc.id for h in await index.vector_search([0.0, 1.0, 0.0])]


async def test_a_query_with_nothing_to_search_for_is_an_error_never_the_newest(
    redis_client: aioredis.Redis,
) -> None:
    index = redis_index(redis_client, archival_base("brain", "archival:stop-user"))
    await index.add(IndexedDoc(id="old", text="The boiler is serviced in October.", ts=1.0), [1.0, 0.0])
    await index.add(IndexedDoc(id="new", text="We talked about the weather.", ts=2.0), [0.0, 1.0])
    with pytest.raises(InputError, match="only stop words"):
        await index.search("what was it about?")
    listed, _ = await index.search("")  # an empty query asks for the listing by date, explicitly
    assert [h.doc.id for h in listed] == ["new", "old"]
    by_vector, _ = await index.search("what was it?", vector=[1.0, 0.1])  # the vector alone, no recency
    assert [h.doc.id for h in by_vector] == ["old", "new"]
    assert await index.related("what was it?") == []  # internal lookups: nothing related
    assert [h.doc.id for h in await index.related("boiler")] == ["old"]


async def test_a_long_text_is_analysed_once_by_related(
    redis_client: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = redis_index(redis_client, archival_base("brain", "archival:long-user"))
    await index.add(IndexedDoc(id="old", text="The boiler is serviced in October.", ts=1.0))
    analysed: list[str] = []

    def counted(text: str, asked_at: float, **options: object) -> Query:
        analysed.append(text)
        return analyse_query(text, asked_at)

    monkeypatch.setattr(search_index, "analyse_query", counted)
    long = "When is the boiler serviced again? " * (LONGEST // 30)  # longer than a text cache keeps
    assert len(long) > LONGEST
    assert [h.doc.id for h in await index.related(long)] == ["old"]
    assert analysed == [long]  # its check and its search share one analysis
    hits, _ = await index.search(long)
    assert [h.doc.id for h in hits] == ["old"] and analysed == [long, long]


async def test_a_reranker_reorders_the_best_hits_and_pages_stay_consistent(
    redis_client: aioredis.Redis,
) -> None:
    asked: list[tuple[str, list[str]]] = []

    async def rerank(query: str, documents: Sequence[str]) -> list[float]:
        asked.append((query, list(documents)))
        return [float(i) for i in range(len(documents))]  # the reverse of the order it was given

    base = archival_base("brain", "rerank-user")
    plain = redis_index(redis_client, base, dated=True)
    docs = [IndexedDoc(id=f"t{i}", text=f"Oslo trip note {i}", ts=86_400 * (i + 1)) for i in range(6)]
    await plain.add_many([*DOCS, *docs])
    before, total = await plain.search("Oslo", limit=10)
    reranked = redis_index(redis_client, base, dated=True, rerank=rerank, rerank_depth=4)
    first, total_r = await reranked.search("Oslo", limit=3)
    second, _ = await reranked.search("Oslo", offset=3, limit=3)
    assert total_r == total == 8
    head = [h.doc.id for h in before[:4]]
    assert [h.doc.id for h in first + second] == [*reversed(head), *[h.doc.id for h in before[4:6]]]
    assert [h.score for h in first] == [3.0, 2.0, 1.0]  # the reranker's scores
    assert len(asked) == 2 and all(q == "Oslo" and len(d) == 4 for q, d in asked)
    by_id = {h.doc.id: h.doc for h in before}
    assert asked[0][1] == [plain.indexed_text(by_id[i]) for i in head]  # what is indexed: with the day
    assert "[2 January 1970] Oslo trip note 0" in [plain.indexed_text(d) for d in docs]
    beyond, _ = await reranked.search("Oslo", offset=4, limit=2)  # past the reranked head: no call
    listing, _ = await reranked.search("", limit=2)  # a date listing is not a query: no call
    assert [h.doc.id for h in beyond] == [h.doc.id for h in before[4:6]] and len(listing) == 2
    assert len(asked) == 2

    async def failing(query: str, documents: Sequence[str]) -> list[float]:
        raise LLMError("rr: HTTP 503 from the LLM endpoint")

    with pytest.raises(LLMError, match="503"):
        await redis_index(redis_client, base, dated=True, rerank=failing).search("Oslo")


DAY = 86_400.0
ASKED = 1_678_881_600.0  # 2023-03-15 12:00 UTC, a Wednesday
TOLD = [
    IndexedDoc(id="old", text="Ann: I bought a kayak, a red kayak", ts=ASKED - 30 * DAY),
    IndexedDoc(id="new", text="Ann: I bought a kayak", ts=ASKED - DAY),
    IndexedDoc(id="other", text="Bob: the weather was grey", ts=ASKED - DAY + 60),
]


@pytest.mark.parametrize("store", ["redis", "memory"])
async def test_a_period_named_in_the_question_is_preferred(redis_client: aioredis.Redis, store: str) -> None:
    """'yesterday' is the day before the question was asked: its turn outranks a better match of another
    day, and its turns without the question's words still rank; a question naming only a period lists that
    period's turns; question words are not searched."""
    from brain.backends.memory import MemoryBackend

    base = archival_base("brain", "periods")
    index = (
        redis_index(redis_client, base, dated=True)
        if store == "redis"
        else SearchIndex(MemoryBackend(prefix="brain").index(base), dated=True)
    )
    await index.add_many(TOLD)
    hits, total = await index.search("Did Ann buy a kayak?", asked_at=ASKED)
    assert [h.doc.id for h in hits][:1] == ["old"] and total == 2
    hits, total = await index.search("Did Ann buy a kayak yesterday?", asked_at=ASKED)
    assert [h.doc.id for h in hits] == ["new", "old", "other"] and total == 3  # the day's other turn last
    hits, _ = await index.search("Did Ann buy a kayak yesterday?", asked_at=ASKED + 40 * DAY)
    assert [h.doc.id for h in hits] == ["old", "new"]  # asked later: that day holds none of them
    hits, total = await index.search("What did we do yesterday?", asked_at=ASKED)
    assert [h.doc.id for h in hits] == ["other", "new"] and total == 2  # the day's turns, newest first
    hits, _ = await index.search("Ann bought a kayak 上周?", asked_at=ASKED + 7 * DAY, limit=1)
    assert [h.doc.id for h in hits] == ["new"]
    with pytest.raises(InputError):
        await index.search("when?", asked_at=ASKED)
    await index.drop()


async def test_an_index_of_turns_prefers_the_role_a_question_addresses(redis_client: aioredis.Redis) -> None:
    """The same words from the user and from the assistant: a first-person question ranks the user's turn
    first, a second-person one the assistant's, and one in neither person (or in a plain dated index)
    leaves the tie to the ids. The role alone finds nothing."""
    docs = [
        IndexedDoc(id="a", text="Ann: tulips by the fence", tags=("user",), ts=100),
        IndexedDoc(id="b", text="Assistant: tulips by the fence", tags=("assistant",), ts=100),
    ]
    turns = redis_index(redis_client, archival_base("brain", "turns"), dated=True, turns=True)
    plain = redis_index(redis_client, archival_base("brain", "plain"), dated=True)
    for index in (turns, plain):
        await index.add_many(docs)
    ranked = {
        q: [h.doc.id for h in (await turns.search(q))[0]]
        for q in ("What did I plant by the fence?", "What did you suggest by the fence?", "the fence")
    }
    assert list(ranked.values()) == [["a", "b"], ["b", "a"], ["a", "b"]]
    assert [h.doc.id for h in (await plain.search("What did you suggest by the fence?"))[0]] == ["a", "b"]
    with pytest.raises(InputError, match="nothing to search for"):
        await turns.search("what are you?")
    with pytest.raises(InputError, match="dated"):
        SearchIndex(turns.store, turns=True)
