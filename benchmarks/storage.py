"""What memory costs in Redis (issue 30), on a real Redis with scripted models and deterministic English and
Chinese chat text (`benchmarks/common/chat_text.py`). Bytes are `MEMORY USAGE key SAMPLES 0` summed per key
family (`brain.backends.redis.stats.storage_costs`); a ratio is those bytes ÷ the UTF-8 bytes of the
messages' contents ("raw").

- one chat of 1k and 10k turns (`benchmarks/common/storage_chat.py`): brain mode (turns committed as the
  engine commits them), tiered mode (every turn indexed as the tiered mode indexes it), the same turns as
  one MetaGPT BrainMemory JSON blob; lexical search latency over the 10k-turn English index; the store-level
  path checked against a real `Assistant` and `TieredAssistant` (100 exchanges each, facts off);
- 200 facts as the fact worker stores them (`benchmarks/common/storage_facts.py`): bytes of every fact
  family (facts, their index, the audit stream, batches and progress) ÷ 200;
- through the real assistants (`benchmarks/common/storage_runs.py`): a user's fixed cost (one chat of one
  short exchange), what an expired tiered chat leaves (`memory.ttl_seconds` = 2), and the fact queue's
  length while the memory model never answers extraction with JSON;
- the cold-user archive (`brain.backends.redis.archive`) when it exists: null until then;
- lexical recall@5 on the retrieval dev set (`benchmarks/retrieval.py`'s `run_language`), the mean of
  English and Chinese.

Prints tables, then one JSON line. `--quick`: 1k turns only (the *_10k figures are null). `--baseline REV`:
this same script run first on a temporary worktree of REV (`--json-only`, in a subprocess), its figures
printed beside this run's and its dev recall as `dev_recall_at_5_before` (without it, `*_before` is this
run's figure).

    python benchmarks/storage.py [--quick] [--baseline b8bb9e0] [--json-only]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import io
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common.chat_text import exchanges, raw_bytes
from benchmarks.common.revision import revision_tree
from benchmarks.common.servers import local_redis
from benchmarks.common.storage_chat import assistant_check, chat_sizes, key_bytes
from benchmarks.common.storage_facts import store_facts
from benchmarks.common.storage_report import families_table, summary, total
from benchmarks.common.storage_runs import expired_leftovers, fixed_user_costs, queue_growth
from benchmarks.retrieval import run_language
from benchmarks.retrieval_dev.generate import generate
from brain.backends.redis import RedisBackend, RedisClient
from brain.backends.redis.client import TranslatingRedis
from brain.backends.redis.stats import storage_costs
from brain.keys import fact_queue_key
from brain.llm.tokens import Tokenizer
from brain.memory.tiers import Tiers

ROOT = Path(__file__).resolve().parent.parent
OWN_FILES = (  # what --baseline copies into the other revision's tree
    "benchmarks/storage.py",
    "benchmarks/common/chat_text.py",
    "benchmarks/common/storage_chat.py",
    "benchmarks/common/storage_facts.py",
    "benchmarks/common/storage_report.py",
    "benchmarks/common/storage_runs.py",
    "benchmarks/common/storage_archive.py",
)
FACTS = 200
CHECK_EXCHANGES = 100
QUEUE_USERS, QUEUE_ROUNDS = 10, 100


async def freed_by_deleting(client: RedisClient, keys: list[str]) -> int:
    """How far `used_memory` drops when `keys` are deleted (the check for streams, which `MEMORY USAGE`
    overstates when they have long pending lists)."""
    before = int((await client.info("memory"))["used_memory"])
    if keys:
        await client.delete(*keys)
    return before - int((await client.info("memory"))["used_memory"])


async def fact_costs(client: RedisClient, language: str) -> tuple[float, float]:
    """Bytes per fact (every fact family ÷ N) by `MEMORY USAGE`, and with the audit stream counted by
    deleting it."""
    await client.flushdb()
    backend = RedisBackend(client, prefix="storage-facts")
    tiers = Tiers(backend)
    await store_facts(tiers.facts, "fact-user", language, FACTS)
    costs = [c for c in await storage_costs(backend, "fact-user") if c.family.startswith("facts")]
    text = sum(len(f.text.encode()) for f in await tiers.facts.all("fact-user"))
    title = f"[{language}] {FACTS} facts of ~{text / FACTS:.0f} B of text, 2 per 20-turn batch"
    families_table(title, costs, FACTS, text, unit="fact")
    audit = [k for k in await backend.user_leftovers("fact-user") if k.endswith(":audit")]
    usage = sum([await key_bytes(client, k) for k in audit])
    freed = await freed_by_deleting(client, audit)
    print(f"  the audit stream: MEMORY USAGE {usage:,} bytes, deleting it freed {freed:,} bytes")
    return total(costs) / FACTS, (total(costs) - usage + freed) / FACTS


async def dev_recall(client: RedisClient, tokenizer: Tokenizer) -> dict[str, float]:
    """Lexical recall@5 on the retrieval dev set per language (`benchmarks/retrieval.py`)."""
    await client.flushdb()
    tiers = Tiers(RedisBackend(client, prefix="bench"))
    out = {}
    for language in ("en", "zh"):
        results = await run_language(tiers, language, generate(language), None, tokenizer)
        out[language] = statistics.mean(results["lexical"]["r@5"])
    print(f"\ndev set, lexical recall@5: en {out['en']:.3f}, zh {out['zh']:.3f} (the JSON holds their mean)")
    return out


async def queue_run(client: RedisClient) -> tuple[Any, int]:
    prefix = "storage-queue"
    await client.flushdb()
    pairs = exchanges("en", QUEUE_ROUNDS, seed=33)
    growth = await queue_growth(client, prefix, pairs, users=QUEUE_USERS, reclaim_seconds=60)
    freed = await freed_by_deleting(client, [fact_queue_key(prefix)])
    print(
        f"\n[queue] {QUEUE_USERS} users × {QUEUE_ROUNDS} exchanges, facts on (default settings), a memory "
        "model that never answers JSON,\n  one worker pass per round (run_once, holding entries as the "
        f"in-process worker does):\n  XLEN max {max(growth.lengths)}, at the end {growth.lengths[-1]} "
        f"(read, not acknowledged: {growth.pending[-1]}); dead letters at the end {growth.dead[-1]} "
        f"({growth.dead_bytes:,} bytes); {growth.calls} extraction calls\n  the stream: MEMORY USAGE "
        f"{growth.queue_bytes:,} bytes, deleting it freed {freed:,} bytes"
    )
    return growth, freed


async def measure(quick: bool) -> dict[str, Any]:
    sizes = [1_000] if quick else [1_000, 10_000]
    big = str(sizes[-1])
    tokenizer = Tokenizer.for_model("gpt-4o-mini")
    logging.disable(logging.WARNING)  # the queue run's malformed replies and retries are expected
    with local_redis() as (url, server):
        print(f"server: {server}; code: {Path(sys.modules['brain'].__file__ or '').parent.parent}")
        client = TranslatingRedis.from_url(url)
        chats = {language: await chat_sizes(client, language, sizes, tokenizer) for language in ("en", "zh")}
        check = await assistant_check(client, tokenizer, CHECK_EXCHANGES)
        facts = {language: await fact_costs(client, language) for language in ("en", "zh")}
        await client.flushdb()
        fixed = await fixed_user_costs(client, "storage-fixed")
        families_table("[fixed] a user with one chat of one short exchange", fixed, 2, 30)
        await client.flushdb()
        expiring = exchanges("en", 10, seed=32)
        left, left_costs = await expired_leftovers(client, "storage-ttl", expiring)
        title = "[ttl] what is left of a tiered chat of 20 turns, ttl_seconds=2, 3 s later"
        families_table(title, left_costs, 20, raw_bytes(expiring))
        growth, _ = await queue_run(client)
        recall = await dev_recall(client, tokenizer)
        cold: dict[str, Any] = {"archive_ram_freed_ratio": None, "rehydrate_p50_ms": None}
        if importlib.util.find_spec("brain.backends.redis.archive") is not None:
            from benchmarks.common.storage_archive import archive_figures

            cold = await archive_figures(client, tokenizer)
        else:
            print("\n[archive] brain.backends.redis.archive: absent (a revision before the cold archive)")
        await client.aclose()
    en, zh = chats["en"], chats["zh"]
    ratios = {lang: {str(s): chats[lang][str(s)] for s in sizes} for lang in chats}
    return {
        "raw_per_turn": {"en": en["raw_per_turn"], "zh": zh["raw_per_turn"]},
        "ratios": ratios,
        "check": check,
        "bytes_per_fact_zh": facts["zh"][0],
        "bytes_per_fact_checked": facts["en"][1],
        "orphan_families": sorted({c.family for c in left_costs}),
        "dead_letters": growth.dead[-1],
        "json": {
            "brain_ratio_raw_en": en[big]["brain"],
            "brain_ratio_raw_zh": zh[big]["brain"],
            "tiered_ratio_raw_en_10k": None if quick else en["10000"]["tiered"],
            "tiered_ratio_raw_zh_10k": None if quick else zh["10000"]["tiered"],
            "metagpt_blob_ratio_raw_en": en[big]["metagpt"],
            "bytes_per_fact": facts["en"][0],
            "per_user_fixed_bytes": total(fixed),
            "orphan_keys_after_expiry": len(left),
            "queue_max_len": max(growth.lengths),
            "archive_ram_freed_ratio": cold["archive_ram_freed_ratio"],
            "rehydrate_p50_ms": cold["rehydrate_p50_ms"],
            "dev_recall_at_5_before": None,
            "dev_recall_at_5_after": (recall["en"] + recall["zh"]) / 2,
            "lexical_p50_ms_10k": en.get("lexical_p50_ms"),
        },
    }


def run_baseline(rev: str, quick: bool) -> dict[str, Any]:
    """This script's JSON figures on a temporary worktree of `rev` (its own files copied in)."""
    with revision_tree(rev) as tree:
        for name in OWN_FILES:
            shutil.copyfile(ROOT / name, tree / name)
        command = [sys.executable, "benchmarks/storage.py", "--json-only", *(["--quick"] * quick)]
        env = {**os.environ, "PYTHONPATH": str(tree)}
        where = [sys.executable, "-c", "import brain, roles; print(brain.__file__, roles.__file__)"]
        code = subprocess.run(where, cwd=tree, env=env, capture_output=True, text=True).stdout.strip()
        print(f"baseline {rev}: {code}")
        done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"the baseline run on {rev} failed:\n{done.stderr[-3000:]}")
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description="What memory costs in Redis (issue 30).")
    parser.add_argument("--quick", action="store_true", help="1k turns only (a smoke run)")
    parser.add_argument("--baseline", metavar="REV", help="measure REV too, in a temporary worktree")
    parser.add_argument("--json-only", action="store_true", help="print only the JSON line")
    args = parser.parse_args()
    before = None
    if args.baseline:
        started = time.perf_counter()
        before = run_baseline(args.baseline, args.quick)
        print(f"baseline {args.baseline}: measured in {time.perf_counter() - started:.0f} s")
    started = time.perf_counter()
    out = io.StringIO() if args.json_only else sys.stdout
    with contextlib.redirect_stdout(out):
        figures = summary(asyncio.run(measure(args.quick)), before, args.baseline)
        print(f"\nthis run: {time.perf_counter() - started:.0f} s")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
