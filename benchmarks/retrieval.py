"""Retrieval quality and cost on our own dev set (`benchmarks/retrieval_dev`), in English and Chinese.

Each conversation's turns go into a recall index exactly as the tiered assistant writes them
(`roles.tiered.recall_doc`); each question is searched and its evidence turns looked for in the top 5, 10
and 20 (a question with two evidence turns counts half for each). Lexical always; vector and hybrid when an
embeddings endpoint is given (`--base-url`, e.g. `benchmarks/embeddings_server.py`). Latency is the search
alone (questions are embedded before timing). With `--rerank-model`, a fourth mode `reranked` is hybrid
search whose best `--rerank-depth` hits are reordered by that model (through the endpoint's `/rerank`, or
its embeddings with `--rerank-via embeddings`; `--rerank-model local` with `--embedder local`: the cosine of
the embedded embedder's vectors, texts embedded once and remembered); its latency includes the rerank call,
on both sets. With Chinese, the
single-character probes too (`benchmarks/retrieval_dev/single_char.py`: how many questions about 猫 or 茶
find a passage with 猫咪 or 绿茶 in the top 5, lexically). Prints a table per language, then one JSON line.

Then the dated dev set (`benchmarks/retrieval_dev/dated_*.py`, key "dated" of the JSON line): dated sessions,
questions typed single, temporal, multi_hop, latest and preference, scored at turn and session level
(recall@5, recall@10, NDCG@10, per type) against a plain BM25 over the same passages, with the ratios
`lexical_r5_vs_bm25` and `hybrid_r5_vs_bm25` of turn-level recall@5. `--embedder local` (or
`--local-embedder`) embeds with the embedded model, no endpoint needed; `--sets dated` runs that set alone.

    python benchmarks/retrieval.py [--base-url http://127.0.0.1:8765/v1 --model all-MiniLM-L6-v2]
        [--embedder local] [--sets dev,dated]
        [--rerank-model all-MiniLM-L6-v2 --rerank-via rerank --rerank-depth 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


from benchmarks.common.servers import local_redis
from benchmarks.common.stores import redis_tiers
from benchmarks.retrieval_dev.dated_run import dated_table, run_dated
from benchmarks.retrieval_dev.generate import Conversation, generate
from benchmarks.retrieval_dev.single_char import index_single_char_hits
from brain import LLMSettings, OpenAILLM
from brain.backends.redis.client import TranslatingRedis
from brain.llm.local import LocalEmbedder
from brain.llm.protocol import Embed
from brain.llm.rerank import cosine_scores
from brain.llm.tokens import Tokenizer
from brain.memory.tiers import Tiers
from brain.message import Message
from brain.runtime import LOCAL_FUSION
from roles.modes.tiered import recall_doc

KS = (5, 10, 20)
KINDS = ("single", "temporal", "multi", "inference")


def recall(found: list[str], evidence: tuple[str, ...], k: int) -> float:
    top = set(found[:k])
    return sum(e in top for e in evidence) / len(evidence)


async def run_language(
    tiers: Tiers,
    language: str,
    convs: list[Conversation],
    embed: Embed | None,
    tokenizer: Tokenizer,
    reranking: Tiers | None = None,
) -> dict[str, dict[str, list[float]]]:
    """Per mode: per question recall at each k (keys 'r@5:kind'), latencies ('ms') and top-10 tokens."""
    results: dict[str, dict[str, list[float]]] = {}
    for number, conv in enumerate(convs):
        index = tiers.recall(f"retrieval-{language}", str(number))  # as the tiered assistant has it
        await index.drop()
        docs = [recall_doc(message) for message in messages(conv)]
        vectors = await embed([index.indexed_text(d) for d in docs]) if embed is not None else None
        for start in range(0, len(docs), 200):
            await index.add_many(docs[start : start + 200], vectors[start : start + 200] if vectors else None)
        qvectors = await embed([q.text for q in conv.questions]) if embed is not None else None
        for i, question in enumerate(conv.questions):
            modes: dict[str, object] = {"lexical": None}
            if qvectors is not None:
                modes |= {"vector": qvectors[i], "hybrid": qvectors[i]}
            if qvectors is not None and reranking is not None:
                modes |= {"reranked": qvectors[i]}
            for mode, vector in modes.items():
                t0 = time.perf_counter()
                if mode == "vector":
                    hits = await index.vector_search(vector, limit=20)  # type: ignore[arg-type]
                elif mode == "reranked" and reranking is not None:
                    same = reranking.recall(f"retrieval-{language}", str(number))
                    hits, _ = await same.search(question.text, limit=20, vector=vector)  # type: ignore[arg-type]
                else:
                    hits, _ = await index.search(question.text, limit=20, vector=vector)  # type: ignore[arg-type]
                elapsed = (time.perf_counter() - t0) * 1000
                found = [h.doc.id for h in hits]
                out = results.setdefault(mode, {})
                out.setdefault("ms", []).append(elapsed)
                out.setdefault("tokens", []).append(tokenizer.count("\n".join(h.doc.text for h in hits[:10])))
                for k in KS:
                    value = recall(found, question.evidence, k)
                    out.setdefault(f"r@{k}", []).append(value)
                    out.setdefault(f"r@{k}:{question.kind}", []).append(value)
        await index.drop()
    return results


def messages(conv: Conversation) -> list[Message]:
    return [
        Message(
            id=t.id,
            role="user" if t.speaker == conv.speakers[0] else "assistant",
            sent_from=t.speaker,
            content=t.text,
            created_at=datetime.fromtimestamp(t.ts, UTC),
        )
        for t in conv.turns
    ]


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def table(
    language: str, convs: list[Conversation], results: dict[str, dict[str, list[float]]]
) -> dict[str, dict[str, float]]:
    print(
        f"\n[{language}] {len(convs)} conversations, {sum(len(c.turns) for c in convs)} turns, "
        f"{sum(len(c.questions) for c in convs)} questions"
    )
    print(f"{'mode':>8} | {'kind':>9} | {'n':>4} | {'r@5':>5} | {'r@10':>5} | {'r@20':>5}")
    summary: dict[str, dict[str, float]] = {}
    for mode, out in results.items():
        for kind in (*KINDS, "all"):
            suffix = "" if kind == "all" else f":{kind}"
            row = [mean(out[f"r@{k}{suffix}"]) for k in KS]
            n = len(out[f"r@5{suffix}"])
            print(f"{mode:>8} | {kind:>9} | {n:>4} | " + " | ".join(f"{v:>5.3f}" for v in row))
        ms = out["ms"]
        p50, p95 = statistics.median(ms), statistics.quantiles(ms, n=20)[18]
        tokens = mean(out["tokens"])
        print(f"{mode:>8} | latency p50 {p50:.2f} ms, p95 {p95:.2f} ms; top-10 prompt tokens {tokens:.0f}")
        summary[mode] = {f"r@{k}": round(mean(out[f"r@{k}"]), 3) for k in KS} | {"p50_ms": round(p50, 3)}
    return summary


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", help="an OpenAI-compatible endpoint with an embeddings model")
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument(
        "--local-embedder", action="store_true", help="embed with the embedded multilingual-e5-small"
    )
    parser.add_argument("--embedder", choices=("local",), help="local: the same as --local-embedder")
    parser.add_argument("--languages", default="en,zh")
    parser.add_argument("--sets", default="dev,dated", help="dev (the first set), dated, or both")
    parser.add_argument(
        "--rerank-model", help="rerank hybrid hits with this model of the endpoint (local: the embedded one)"
    )
    parser.add_argument("--rerank-via", choices=("rerank", "embeddings"), default="rerank")
    parser.add_argument("--rerank-depth", type=int, default=20)
    args = parser.parse_args()
    llm = None
    if args.base_url:
        llm = OpenAILLM.from_settings(
            LLMSettings(
                base_url=args.base_url,
                embedding_model=args.model,
                rerank_model=args.rerank_model,
                rerank_via=args.rerank_via,
                rerank_depth=args.rerank_depth,
            )
        )
    embed: Embed | None = llm.embed if llm is not None else None
    embedder = LocalEmbedder() if args.local_embedder or args.embedder == "local" else None
    local_rerank = None
    if embedder is not None:
        embed, args.model = cached(embedder.embed), embedder.name
        if args.rerank_model == "local":  # the embedded embedder as the reranker, through the same hook
            local_rerank = cosine_reranker(embed)
    tokenizer = Tokenizer.for_model("gpt-4o-mini")
    summary: dict[str, dict[str, Any]] = {}
    with local_redis() as (url, server):
        client = TranslatingRedis.from_url(url)
        tiers = redis_tiers(client, prefix="bench", fusion=LOCAL_FUSION if embedder is not None else None)
        reranking = None
        if llm is not None and args.rerank_model:
            reranking = redis_tiers(client, prefix="bench", rerank=llm.rerank, rerank_depth=args.rerank_depth)
        elif local_rerank is not None:
            depth = args.rerank_depth
            reranking = redis_tiers(
                client, prefix="bench", fusion=LOCAL_FUSION, rerank=local_rerank, rerank_depth=depth
            )
        print(f"server: {server}; embeddings: {args.model if embed else 'none (lexical only)'}")
        sets = args.sets.split(",")
        for language in args.languages.split(",") if "dev" in sets else ():
            convs = generate(language)
            results = await run_language(tiers, language, convs, embed, tokenizer, reranking)
            summary[language] = table(language, convs, results)
            if language == "zh":  # single-character questions, lexical: found inside longer words?
                probes = tiers.recall("retrieval-zh-single-char", "0")
                hits, total = await index_single_char_hits(probes)
                print(f"\n[zh single-character] {hits} of {total} probes find their passage in the top 5")
                summary["zh_single_char_hits"] = {"hits": hits, "total": total}
        for language in args.languages.split(",") if "dated" in sets else ():
            dated, rows = await run_dated(tiers, language, embed, reranking)
            summary.setdefault("dated", {})[language] = dated_table(language, dated, rows)
        await client.aclose()
    if llm is not None:
        await llm.aclose()
    if embedder is not None:
        embedder.close()
    print(json.dumps(summary))


def cached(embed: Embed) -> Embed:
    """`embed` remembering each text's vector: a reranker asks again for what indexing embedded."""
    seen: dict[str, list[float]] = {}

    async def embed_cached(texts: Sequence[str]) -> list[list[float]]:
        missing = list(dict.fromkeys(t for t in texts if t not in seen))
        if missing:
            seen.update(zip(missing, await embed(missing), strict=True))
        return [seen[t] for t in texts]

    return embed_cached


def cosine_reranker(embed: Embed) -> Callable[[str, Sequence[str]], Awaitable[list[float]]]:
    """A reranker scoring each passage by the cosine of its embedding to the query's."""

    async def rerank(query: str, documents: Sequence[str]) -> list[float]:
        vectors = await embed([query, *documents])
        return cosine_scores(vectors[0], vectors[1:])

    return rerank


if __name__ == "__main__":
    asyncio.run(main())
