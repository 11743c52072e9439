"""Documents into archival memory: token-aware passages, reload adds nothing, a change replaces."""

from __future__ import annotations

import redis.asyncio as aioredis

from brain.keys import archival_base
from brain.llm.tokens import OFFLINE_ENCODING, Tokenizer
from brain.search.documents import load_document, split_document
from brain.search.index import SearchIndex

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
    index = SearchIndex(redis_client, archival_base("brain", "archival:docs-user"))
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
