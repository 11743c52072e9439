"""Documents into archival memory: token-aware passages, reload adds nothing, a change replaces."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
import redis.asyncio as aioredis

from brain.errors import LLMError
from brain.keys import archival_base
from brain.llm.tokens import OFFLINE_ENCODING, Tokenizer
from brain.progress import ProgressEvent
from brain.search.documents import EMBED_CHUNK, load_document, split_document
from tests.support.stores import redis_index

TOK = Tokenizer.for_model("", OFFLINE_ENCODING)


def test_split_keeps_paragraphs_and_overlaps_long_ones() -> None:
    text = "Short intro.\n\nSecond paragraph here.\n\n" + " ".join(f"w{i}" for i in range(400))
    passages = split_document(text, TOK, max_tokens=100, overlap=20)
    assert passages[0] == "Short intro.\n\nSecond paragraph here."
    assert all(TOK.count(p) <= 100 for p in passages)
    words = [p.split() for p in passages[1:]]
    assert words[0][-5:] and set(words[0][-3:]) & set(words[1][:40])  # consecutive pieces overlap
    assert split_document("", TOK) == []


async def test_reload_adds_nothing_and_a_change_replaces(redis_client: aioredis.Redis) -> None:
    index = redis_index(redis_client, archival_base("brain", "archival:docs-user"))
    text = "# Notes\n\nThe boiler is serviced every October.\n\nThe spare key is under the blue pot."
    first = await load_document(index, "/home/ann/notes.md", text, TOK, max_tokens=12, overlap=2)
    assert first.added >= 2 and not first.unchanged
    again = await load_document(index, "/home/ann/notes.md", text, TOK, max_tokens=12, overlap=2)
    assert again.unchanged and again.added == 0 and await index.count() == first.added
    hits, _ = await index.search("spare key")
    assert hits[0].doc.source == "/home/ann/notes.md" and "document" in hits[0].doc.tags
    changed = await load_document(index, "/home/ann/notes.md", "The spare key moved to the shed.", TOK)
    assert changed.removed == first.added and changed.added == 1 and await index.count() == 1
    assert [h.doc.text for h in (await index.search("spare key"))[0]] == ["The spare key moved to the shed."]
    other = await load_document(index, "/home/ann/other.md", "The spare key moved to the shed.", TOK)
    assert other.added == 1 and await index.count() == 2  # same text from another file is its own passage


async def test_a_failed_embedding_keeps_the_old_passages_and_the_next_load_retries(
    redis_client: aioredis.Redis,
) -> None:
    index = redis_index(redis_client, archival_base("brain", "archival:embed-user"))
    calls: list[int] = []

    async def embed(texts: Sequence[str]) -> list[list[float]]:
        calls.append(len(texts))
        return [[1.0, float(len(t))] for t in texts]

    async def broken(texts: Sequence[str]) -> list[list[float]]:
        raise LLMError("the embeddings endpoint is down")

    old = "\n\n".join(f"Paragraph {i} about the boiler." for i in range(3))
    await load_document(index, "notes.md", old, TOK, max_tokens=8, overlap=1, embed=embed)
    before = await index.count()
    new = old + "\n\nA new paragraph about the spare key."
    with pytest.raises(LLMError):
        await load_document(index, "notes.md", new, TOK, max_tokens=8, overlap=1, embed=broken)
    assert await index.count() == before  # the old passages are all there ...
    assert len((await index.search("boiler"))[0]) == before
    seen: list[ProgressEvent] = []
    again = await load_document(
        index, "notes.md", new, TOK, max_tokens=8, overlap=1, embed=embed, progress=seen.append
    )
    assert not again.unchanged and again.added == 1 and again.removed == 0  # ... and the retry happens
    assert [(e.task, e.done, e.total, e.unit) for e in seen] == [
        ("embedding", 0, 4, "passages"),
        ("embedding", 4, 4, "passages"),
    ]
    assert await index.count() == before + 1
    seen.clear()
    unchanged = await load_document(index, "notes.md", new, TOK, max_tokens=8, overlap=1, embed=embed)
    assert unchanged.unchanged and seen == []  # nothing to do, nothing told


async def test_long_documents_are_embedded_in_chunks_with_progress(redis_client: aioredis.Redis) -> None:
    index = redis_index(redis_client, archival_base("brain", "archival:long-user"))
    sizes: list[int] = []

    async def embed(texts: Sequence[str]) -> list[list[float]]:
        sizes.append(len(texts))
        return [[1.0, 0.5] for _ in texts]

    text = "\n\n".join(f"Line {i} of a long file." for i in range(EMBED_CHUNK * 2 + 10))
    seen: list[ProgressEvent] = []
    result = await load_document(
        index,
        "long.txt",
        text,
        TOK,
        max_tokens=10,
        overlap=1,
        embed=embed,
        progress=seen.append,
    )
    total = result.added
    assert sizes[:-1] == [EMBED_CHUNK] * (len(sizes) - 1) and sum(sizes) == total
    assert [e.done for e in seen] == [0, *(min(EMBED_CHUNK * (i + 1), total) for i in range(len(sizes)))]
    assert {e.total for e in seen} == {total} and seen[-1].finished
