"""Loading documents (text, Markdown) into archival memory: token-aware passages with overlap.

Loading the same file twice adds nothing; a changed file replaces its old passages.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from brain.llm.protocol import Embed
from brain.llm.tokens import Tokenizer
from brain.progress import Progress, report
from brain.search.index import IndexedDoc, SearchIndex

__all__ = ["EMBED_CHUNK", "LoadResult", "embed_texts", "load_document", "split_document"]

EMBED_CHUNK = 256
"""Passages embedded per call while loading (the gateway splits further to the endpoint's limits)."""


class LoadResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    source: str
    added: int
    removed: int
    unchanged: bool


def split_document(text: str, tokenizer: Tokenizer, max_tokens: int = 300, overlap: int = 50) -> list[str]:
    """Passages of at most `max_tokens`, each starting `overlap` tokens before the previous one ended.
    Paragraphs are kept whole when they fit. Pure."""
    paragraphs = [p.strip() for p in text.replace("\r\n", "\n").split("\n\n") if p.strip()]
    passages: list[str] = []
    current = ""
    for paragraph in paragraphs:
        joined = f"{current}\n\n{paragraph}" if current else paragraph
        if tokenizer.count(joined) <= max_tokens:
            current = joined
            continue
        if current:
            passages.append(current)
        if tokenizer.count(paragraph) <= max_tokens:
            current = paragraph
        else:
            pieces = tokenizer.split(paragraph, max_tokens, overlap)
            passages += pieces[:-1]
            current = pieces[-1]
    if current:
        passages.append(current)
    return passages


async def embed_texts(
    embed: Embed,
    texts: Sequence[str],
    progress: Progress | None = None,
    *,
    task: str = "embedding",
    unit: str = "passages",
) -> list[list[float]]:
    """The vectors of `texts`, `EMBED_CHUNK` per call; `progress` is told after each call."""
    vectors: list[list[float]] = []
    report(progress, task, 0, len(texts), unit)
    for start in range(0, len(texts), EMBED_CHUNK):
        vectors += await embed(texts[start : start + EMBED_CHUNK])
        report(progress, task, len(vectors), len(texts), unit)
    return vectors


async def load_document(
    index: SearchIndex,
    source: str,
    text: str,
    tokenizer: Tokenizer,
    *,
    max_tokens: int = 300,
    overlap: int = 50,
    embed: Embed | None = None,
    progress: Progress | None = None,
) -> LoadResult:
    """Put `text` (from `source`, e.g. a file path) into `index` as passages tagged `document`.

    Everything is embedded before anything is written: a failing embedding call leaves the old passages
    and the source's marker as they were, so loading again retries. Passages that did not change keep
    their ids; only the ones gone from the text are removed. `progress` is told the passages embedded."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    known = await index.get_source(source)
    if known is not None and known.get("sha256") == digest:
        return LoadResult(source=source, added=0, removed=0, unchanged=True)
    passages = split_document(text, tokenizer, max_tokens, overlap)
    docs = [
        IndexedDoc(
            id=hashlib.sha256(f"{source}\0{i}\0{p}".encode()).hexdigest()[:32],
            text=p,
            tags=("document",),
            source=source,
            metadata={"chunk": i},
        )
        for i, p in enumerate(passages)
    ]
    vectors = (
        await embed_texts(embed, [index.indexed_text(d) for d in docs], progress)
        if embed is not None and docs
        else None
    )
    added = await index.add_many(docs, vectors)
    kept = {d.id for d in docs}
    removed = 0
    for doc_id in (known or {}).get("ids", []):
        if doc_id not in kept:
            removed += await index.delete(doc_id)
    await index.set_source(source, {"sha256": digest, "ids": [d.id for d in docs]})
    return LoadResult(source=source, added=added, removed=removed, unchanged=False)
