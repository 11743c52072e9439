"""The dated dev set measured: each conversation's turns go into a recall index as the tiered assistant
writes them, each question is searched (lexical; vector and hybrid with an embedder) and, as a baseline, a
plain BM25 (`benchmarks.common.bm25`) ranks the same passages (the indexed texts, headed by their day).
Turn- and session-level recall@5, recall@10 and NDCG@10, per question type and overall, and p50 latency.

A search whose signature has an `asked_at` parameter is given the question's time (epoch seconds), so a
query analysis can resolve "last week"; today's has none and searches the text alone."""

from __future__ import annotations

import inspect
import time
from datetime import UTC
from typing import Any

from benchmarks.common.bm25 import Bm25, tokens
from benchmarks.common.retrieval_metrics import mean, ndcg_at, p50, recall_at, session_ranking
from benchmarks.retrieval_dev.dated_generate import generate_dated
from benchmarks.retrieval_dev.dated_model import TYPES, DatedConversation
from brain.llm.protocol import Embed
from brain.memory.recall import recall_doc
from brain.memory.tiers import Tiers
from brain.message import Message

__all__ = ["METRICS", "dated_table", "run_dated", "score"]

DEPTH = 50  # turns retrieved per question (sessions are rolled up from them)
METRICS = ("recall@5", "recall@10", "ndcg@10")
Row = dict[str, Any]  # one question in one mode: its type, metrics and latency


def score(ranked: list[str], evidence: tuple[str, ...], prefix: str = "") -> dict[str, float]:
    """The three metrics of one ranking, keys prefixed (e.g. 'session_')."""
    return {
        f"{prefix}recall@5": recall_at(ranked, evidence, 5),
        f"{prefix}recall@10": recall_at(ranked, evidence, 10),
        f"{prefix}ndcg@10": ndcg_at(ranked, evidence, 10),
    }


def messages(conv: DatedConversation) -> list[Message]:
    return [
        Message(
            id=t.id,
            role=t.role,
            sent_from=t.speaker,
            content=t.text,
            created_at=t.at.astimezone(UTC),
        )
        for t in conv.turns
    ]


async def run_dated(
    tiers: Tiers, language: str, embed: Embed | None, reranking: Tiers | None = None
) -> tuple[list[DatedConversation], dict[str, list[Row]]]:
    """Per mode ('lexical', 'vector', 'hybrid', 'bm25', and 'reranked' with `reranking`: hybrid whose best
    hits its reranker reorders): a row per question."""
    convs = generate_dated(language)
    rows: dict[str, list[Row]] = {}
    for conv in convs:
        index = tiers.recall(f"dated-{language}", conv.id)
        await index.drop()
        docs = [recall_doc(m) for m in messages(conv)]
        texts = [index.indexed_text(d) for d in docs]
        vectors = await embed(texts) if embed is not None else None
        for start in range(0, len(docs), 200):
            await index.add_many(docs[start : start + 200], vectors[start : start + 200] if vectors else None)
        bm25 = Bm25([tokens(t, language) for t in texts])
        session_of = {t.id: t.session_id for t in conv.turns}
        qvectors = await embed([q.text for q in conv.questions]) if embed is not None else None
        timed = "asked_at" in inspect.signature(index.search).parameters
        for i, question in enumerate(conv.questions):
            extra: dict[str, Any] = {"asked_at": question.asked_at.timestamp()} if timed else {}
            modes: dict[str, Any] = {"lexical": None, "bm25": None}
            if qvectors is not None:
                modes |= {"vector": qvectors[i], "hybrid": qvectors[i]}
                if reranking is not None:
                    modes |= {"reranked": qvectors[i]}
            for mode, vector in modes.items():
                t0 = time.perf_counter()
                if mode == "bm25":
                    found = [docs[p].id for p in bm25.top(tokens(question.text, language), DEPTH)]
                elif mode == "vector":
                    found = [h.doc.id for h in await index.vector_search(vector, limit=DEPTH)]
                else:
                    searched = index
                    if mode == "reranked" and reranking is not None:
                        searched = reranking.recall(f"dated-{language}", conv.id)
                    hits, _ = await searched.search(question.text, limit=DEPTH, vector=vector, **extra)
                    found = [h.doc.id for h in hits]
                elapsed = (time.perf_counter() - t0) * 1000
                sessions = session_ranking(found, session_of)
                row = {"type": question.type, "ms": elapsed} | score(found, question.evidence_turns)
                row |= score(sessions, question.evidence_sessions, "session_")
                rows.setdefault(mode, []).append(row)
        await index.drop()
    return convs, rows


def _figures(rows: list[Row]) -> dict[str, float]:
    keys = [*METRICS, *(f"session_{m}" for m in METRICS)]
    return {k: round(mean([r[k] for r in rows]), 3) for k in keys}


def dated_table(language: str, convs: list[DatedConversation], rows: dict[str, list[Row]]) -> dict[str, Any]:
    """Prints the figures of one language; returns them (per mode, by type) with the R@5 ratios to BM25."""
    questions = sum(len(c.questions) for c in convs)
    print(
        f"\n[dated {language}] {len(convs)} conversations, {sum(len(c.sessions) for c in convs)} sessions, "
        f"{sum(len(c.turns) for c in convs)} turns, {questions} questions (turn | session level)"
    )
    print(f"{'mode':>8} | {'type':>10} | {'n':>4} | {'r@5':>5} | {'r@10':>5} | {'nd@10':>5} || "
          f"{'r@5':>5} | {'r@10':>5} | {'nd@10':>5}")  # fmt: skip
    out: dict[str, Any] = {"questions": questions}
    for mode, mode_rows in rows.items():
        by_type: dict[str, Any] = {}
        for kind in (*TYPES, "all"):
            chosen = [r for r in mode_rows if kind in ("all", r["type"])]
            figures = _figures(chosen)
            if kind != "all":
                by_type[kind] = {"n": len(chosen)} | figures
            cells = [f"{v:>5.3f}" for v in figures.values()]
            turn, session = " | ".join(cells[:3]), " | ".join(cells[3:])
            print(f"{mode:>8} | {kind:>10} | {len(chosen):>4} | {turn} || {session}")
        ms = p50([r["ms"] for r in mode_rows])
        print(f"{mode:>8} | latency p50 {ms:.2f} ms")
        out[mode] = _figures(mode_rows) | {"by_type": by_type, "p50_ms": round(ms, 3)}
    for mode in ("lexical", "hybrid"):
        if mode in out and out["bm25"]["recall@5"]:
            out[f"{mode}_r5_vs_bm25"] = round(out[mode]["recall@5"] / out["bm25"]["recall@5"], 3)
    return out
