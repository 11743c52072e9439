"""Fact memory and memory blocks, measured with scripted models against a local Redis (issue 9).

Scenarios: a replay of 5 facts in 3 wordings said 5 times each; a contradiction and its rollback; ids the
model invents; a turn's latency with facts on (in-process worker) vs off, with a model that takes 20 ms;
LLM calls and prompt tokens of fact work per 1,000 turns; a worker killed with SIGKILL mid-batch; a fact
planted at turn 0 checked in every prompt up to turn 1,000 with default settings; block memory over 1,000
turns with tool calls. Prints a table, then one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import redis.asyncio as aioredis

from actions.remember import remember
from benchmarks.common.servers import local_redis
from benchmarks.common.stores import redis_tiers
from brain import Settings, local_runtime, open_runtime
from brain.backends.redis import RedisBackend
from brain.backends.redis.client import TranslatingRedis
from brain.memory.blocks.budget import message_tokens
from brain.message import Message
from brain.testing import ScriptedCall, ScriptedLLM, tool_calls
from roles import Assistant
from roles.fact_worker import FactWorker, running
from roles.skills import SkillDeclaration, Skills

WORDINGS = {
    "city": ["I live in Oslo", "My home is in Oslo", "Oslo is where I live"],
    "diet": ["I am vegetarian", "I eat a vegetarian diet", "Vegetarian food only for me"],
    "pet": ["I have a cat named Miso", "My cat is called Miso", "Miso is my cat"],
    "job": ["I work as a nurse", "My job: I am a nurse", "Nurse is my job"],
    "lang": ["I speak Norwegian", "Norwegian is my language", "I talk in Norwegian"],
}
KEY_WORDS = {
    "chinese": "food",
    "oslo": "city",
    "vegetarian": "diet",
    "miso": "pet",
    "nurse": "job",
    "norwegian": "lang",
}
FOREVER = 1_000_000


def weather(city: str) -> dict[str, object]:
    """The benchmark's tool (entry point `benchmarks.facts:weather`)."""
    return {"city": city, "forecast": "light rain, clearing later", "celsius": 14, "wind_kmh": 12}


def topic(text: str) -> str:
    return next((k for w, k in KEY_WORDS.items() if w in text.lower()), text)


def said_lines(call: ScriptedCall) -> list[str]:
    text = (call.messages[1].content or "").split("SUMMARIZE:")[0]
    return [m.group(1) for m in re.finditer(r"^[^:\n]+: (.+)$", text, re.M) if "TURNS" not in m.group(0)]


def extractor(call: ScriptedCall) -> str:
    """Extraction reproduces what the user said; reconciliation says NONE for a known topic, UPDATE for a
    contradiction (same topic, opposite verb), ADD otherwise; a fold request gets a summary."""
    system = call.messages[0].content or ""
    user = call.messages[1].content or ""
    if "EXISTING facts" in user:
        existing = re.findall(r"^(\d+): (.+)$", user.split("NEW facts:")[0], re.M)
        new = re.findall(r"^(\d+): (.+)$", user.split("NEW facts:")[1], re.M)
        out = []
        for j, text in new:
            same = [i for i, old in existing if topic(old) == topic(text)]
            if "hate" in text and same:
                out.append({"event": "UPDATE", "id": same[0], "text": text, "new": int(j)})
            elif same:
                out.append({"event": "NONE", "id": same[0], "new": int(j)})
            else:
                out.append({"event": "ADD", "text": text, "new": int(j)})
        return json.dumps({"memory": out})
    facts = [
        line for line in said_lines(call) if line.startswith(("I ", "My ", "Oslo", "Vegetarian", "Miso"))
    ]
    reply: dict[str, Any] = {"facts": [{"text": f} for f in facts if "turn" not in f or "like" in f]}
    if "SUMMARIZE:" in user and "rolling summary" in system:
        reply["summary"] = "Summary: " + " ".join(re.findall(r"\b\d{4}\b", user.split("SUMMARIZE:")[1]))[:400]
    return json.dumps(reply)


def delayed(reply: Callable[[ScriptedCall], str], seconds: float) -> Callable[[ScriptedCall], Awaitable[str]]:
    async def answer(call: ScriptedCall) -> str:
        await asyncio.sleep(seconds)
        return reply(call)

    return answer


async def replay(client: aioredis.Redis) -> dict[str, Any]:
    store, llm = redis_tiers(client).facts, ScriptedLLM([extractor] * FOREVER)
    seen: set[str] = set()
    repeat_calls = total_calls = 0
    for _ in range(5):
        for index in range(3):
            for wordings in WORDINGS.values():
                text = wordings[index]
                report = await remember(llm, store, "replay", [Message(content=text, role="user")])
                total_calls += report.calls
                if text in seen:
                    repeat_calls += report.calls
                seen.add(text)
    return {
        "valid": len(await store.all("replay")),
        "repeat_calls": repeat_calls,
        "calls": total_calls,
    }


async def contradiction(client: aioredis.Redis) -> dict[str, Any]:
    store, llm = redis_tiers(client).facts, ScriptedLLM([extractor] * 10)
    await remember(llm, store, "food", [Message(content="I love Chinese food", role="user")])
    await remember(llm, store, "food", [Message(content="I hate Chinese food", role="user")])
    current = [f.text for f in await store.all("food")]
    everything = await store.all("food", current_only=False)
    events = await store.history("food")
    retired = [f for f in everything if f.text == "I love Chinese food" and not f.current]
    ok = current == ["I hate Chinese food"] and len(retired) == 1 and retired[0].superseded_by is not None
    ok = ok and [e.event for e in events] == ["ADD", "UPDATE"] and events[1].old_text == "I love Chinese food"
    await store.rollback("food", events[1].id, actor="benchmark")
    rolled = [f.text for f in await store.all("food")] == ["I love Chinese food"]
    return {"ok": ok, "rollback_ok": rolled and (await store.history("food"))[-1].event == "ROLLBACK"}


async def hallucinated(client: aioredis.Redis) -> int:
    def invent(call: ScriptedCall) -> str:
        if "EXISTING facts" not in (call.messages[1].content or ""):
            return extractor(call)
        bad = [
            {"event": "UPDATE", "id": "7", "text": "x", "new": 0},
            {"event": "DELETE", "id": "f00d", "new": 0},
        ]
        return json.dumps({"memory": bad})

    store, llm = redis_tiers(client).facts, ScriptedLLM([extractor, invent, invent])
    await remember(llm, store, "ghost", [Message(content="I live in Oslo", role="user")])
    before = await store.history("ghost")
    report = await remember(llm, store, "ghost", [Message(content="My home is in Oslo", role="user")])
    after = await store.history("ghost")
    assert len(report.rejected) == 2, report
    return len(after) - len(before)


def settings_for(url: str, *, facts: bool, prefix: str, **memory: Any) -> Settings:
    return Settings.model_validate(
        {
            "redis": {"url": url, "key_prefix": prefix},
            # the follow-up rewrite is measured by benchmarks/followups.py; here it would only add calls
            "memory": {"facts": {"enabled": facts}, "rewrite_followups": False, **memory},
            "local": {"embedder": "off"},  # scripted models only: no embedded embedder even when installed
        }
    )


async def latency(url: str, model_seconds: float) -> dict[str, float]:
    """p50 of a turn with facts off and on (in-process worker), models answering in `model_seconds`,
    alternating, 3 repeats of 60 turns (the first 10 not counted)."""
    ratios, p50 = [], {"off": [], "on": []}  # type: ignore[var-annotated]
    for repeat in range(3):
        for mode in ("off", "on"):
            answer = ScriptedLLM([delayed(lambda c: "Noted.", model_seconds)] * FOREVER)
            memory_llm = ScriptedLLM([delayed(extractor, model_seconds)] * FOREVER)
            prefix = f"lat{int(model_seconds * 1000)}{repeat}{mode}"
            settings = settings_for(url, facts=mode == "on", prefix=prefix)
            async with open_runtime(settings, llm=answer, memory_llm=memory_llm) as runtime, running(runtime):
                assistant = Assistant.for_runtime(runtime)
                times = []
                for i in range(60):
                    start = time.perf_counter()
                    await assistant.chat("lat", "c", f"I like item{i % 7} a lot, turn {i}")
                    times.append(time.perf_counter() - start)
            p50[mode].append(statistics.median(times[10:]) * 1000)
        ratios.append(p50["on"][-1] / p50["off"][-1])
    return {
        "ratio": statistics.median(ratios),
        "off_ms": statistics.median(p50["off"]),
        "on_ms": statistics.median(p50["on"]),
    }


async def economy(url: str) -> dict[str, Any]:
    """1,000 turns (10 users x 100) with facts on; the worker drains; calls and prompt tokens counted."""
    memory_llm = ScriptedLLM([extractor] * FOREVER)
    settings = settings_for(url, facts=True, prefix="eco")
    answers = ScriptedLLM(["Noted."] * FOREVER)
    async with open_runtime(settings, llm=answers, memory_llm=memory_llm) as runtime, running(runtime):
        assistant = Assistant.for_runtime(runtime)

        async def user(u: int) -> None:
            for i in range(100):
                text = f"I like item{u}x{i // 10} a lot" if i % 10 == 0 else f"turn {i}: how is it going {u}?"
                await assistant.chat(f"user{u}", "c", text)

        await asyncio.gather(*(user(u) for u in range(10)))
        assert runtime.tiers is not None
        queue = runtime.tiers.fact_queue
        for _ in range(600):  # the in-process worker drains it
            if not (await queue.backlog() or await queue.pending()):
                break
            await asyncio.sleep(0.2)
        else:
            raise RuntimeError("the fact queue did not drain in 2 minutes")
    calls = len(memory_llm.calls)
    tokens = statistics.mean(c.prompt_tokens for c in memory_llm.calls)
    kinds = {"extract": 0, "reconcile": 0, "fold": 0, "summary": 0}
    for c in memory_llm.calls:
        asked = c.messages[1].content or ""
        if "EXISTING facts" in asked:
            kinds["reconcile"] += 1
        elif "SUMMARIZE:" in asked:
            kinds["fold"] += 1
        elif "condense conversation" in (c.messages[0].content or ""):
            kinds["summary"] += 1
        else:
            kinds["extract"] += 1
    return {"calls": calls, "prompt_tokens": tokens, "kinds": " / ".join(map(str, kinds.values()))}


async def crash(url: str) -> bool:
    """A worker takes a batch and is killed (SIGKILL) in its LLM call; another reclaims it and applies it
    once."""
    settings = Settings.model_validate(
        {
            "redis": {"url": url, "key_prefix": "crash"},
            "memory": {"facts": {"enabled": True, "reclaim_seconds": 0.5, "in_process_worker": False}},
            "local": {"embedder": "off"},
        }
    )
    memory_llm = ScriptedLLM([extractor] * 10)
    async with open_runtime(settings, llm=ScriptedLLM(["Noted."] * 10), memory_llm=memory_llm) as runtime:
        await Assistant.for_runtime(runtime).chat("kim", "c", "I speak Norwegian")
        child = subprocess.Popen(  # noqa: ASYNC220 - the benchmark waits for it on purpose
            [sys.executable, __file__, "--doomed-worker", url], stdout=subprocess.PIPE, text=True
        )
        assert child.stdout is not None
        line = await asyncio.to_thread(child.stdout.readline)
        assert line.strip() == "taken", line
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        await asyncio.sleep(0.6)
        report = await FactWorker(runtime, name="survivor").run_once(block_ms=None)
        again = await FactWorker(runtime, name="survivor").run_once(block_ms=None)
        assert runtime.tiers is not None
        facts = [f.text for f in await runtime.tiers.facts.all("kim")]
        pending = await runtime.tiers.fact_queue.pending()
    return (
        report.entries == 1
        and report.calls == 1
        and again.entries == 0
        and facts == ["I speak Norwegian"]
        and pending == 0
    )


async def doomed_worker(url: str) -> None:
    async def hang(call: ScriptedCall) -> str:
        print("taken", flush=True)
        await asyncio.sleep(3600)
        return ""

    settings = Settings.model_validate(
        {"redis": {"url": url, "key_prefix": "crash"}, "memory": {"facts": {"enabled": True}}}
    )
    client = TranslatingRedis.from_url(url)
    backend = RedisBackend.for_settings(client, settings)
    runtime = local_runtime(
        ScriptedLLM([]), settings=settings, backend=backend, memory_llm=ScriptedLLM([hang])
    )
    await FactWorker(runtime, name="doomed").run_once(block_ms=5_000)


async def out_of_view(url: str) -> dict[str, int]:
    """Default settings; a faithful summarizer (keeps the numbers it is given); the code said at turn 0
    must be in every prompt up to turn 1,000 (verbatim, in the summary, or as a fact)."""

    def faithful(call: ScriptedCall) -> str:
        return "The user said: " + " ".join(
            dict.fromkeys(re.findall(r"\b\d{4}\b", call.messages[-1].content or ""))
        )

    answers = ScriptedLLM(["Sure, noted."] * FOREVER)
    summarizer = ScriptedLLM([faithful] * FOREVER)
    settings = Settings.model_validate({"redis": {"url": url, "key_prefix": "view"}})
    async with open_runtime(settings, llm=answers, memory_llm=summarizer) as runtime:
        assistant = Assistant.for_runtime(runtime)
        await assistant.chat("vee", "c", "My locker code is 4417, please remember it.")
        for i in range(1, 1_000):
            await assistant.chat("vee", "c", f"Turn {i}: tell me something about topic {i} in a few words.")
    missing = sum("4417" not in " ".join(m.content or "" for m in c.messages) for c in answers.calls[1:])
    return {"missing": missing, "summaries": len(summarizer.calls), "turns": len(answers.calls)}


async def blocks(url: str) -> dict[str, Any]:
    """1,000 turns in blocks mode, a tool call every other turn; every prompt measured."""
    limit = 2_000
    settings = Settings.model_validate(
        {
            "redis": {"url": url, "key_prefix": "blocks"},
            "memory": {
                "mode": "blocks",
                "blocks": {
                    "token_limit": limit,
                    "token_flush_size": 200,
                    "static": "Policy: never share the code 9931.",
                },
            },
        }
    )
    replies: list[Any] = []
    for i in range(1_000):
        if i % 2:
            replies.append(tool_calls(("weather", {"city": f"City{i}"})))
        replies.append(
            f"Turn {i}: here is a detailed answer about city {i}, with some reasoning and a plan. " * 3
        )
    answers = ScriptedLLM(replies)
    memory_llm = ScriptedLLM([extractor] * FOREVER)
    skill = SkillDeclaration(
        name="weather",
        description="Weather for a city",
        entry="benchmarks.facts:weather",
        parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    )
    async with open_runtime(settings, llm=answers, memory_llm=memory_llm) as runtime:
        assistant = Assistant.for_runtime(runtime, skills=Skills.load([skill]))
        assert assistant.engine.mode.name == "blocks"  # `memory.mode: blocks` picks the mode
        await assistant.chat("bea", "c", "I like hiking with my dog 2210.")
        for i in range(1, 1_000):
            await assistant.chat("bea", "c", f"Turn {i}: what is the weather in City{i}? Explain in detail.")
        tokenizer = runtime.tokenizer
    sizes = [sum(message_tokens(tokenizer, m) for m in c.messages) for c in answers.calls]
    over = sum(s > limit for s in sizes)
    intact = all("Policy: never share the code 9931." in (c.messages[0].content or "") for c in answers.calls)
    return {
        "over": over,
        "intact": intact,
        "max": max(sizes),
        "calls": len(answers.calls),
        "memory_calls": len(memory_llm.calls),
    }


async def step(name: str, work: Awaitable[Any]) -> Any:
    """Run one scenario, saying on stderr what runs and how long it took."""
    print(f"... {name}", end="", file=sys.stderr, flush=True)
    start = time.perf_counter()
    result = await work
    print(f" ({time.perf_counter() - start:.1f} s)", file=sys.stderr, flush=True)
    return result


async def main() -> None:
    with local_redis() as (url, server):
        client = TranslatingRedis.from_url(url)
        rep = await step("replay", replay(client))
        con = await step("contradiction", contradiction(client))
        ghost = await step("invented ids", hallucinated(client))
        await client.aclose()
        lat = await step("latency, 100 ms model", latency(url, 0.1))
        fast = await step("latency, 20 ms model", latency(url, 0.02))
        eco = await step("1,000 turns with facts on", economy(url))
        crashed = await step("worker killed mid-batch", crash(url))
        view = await step("a turn-0 fact over 1,000 turns", out_of_view(url))
        blk = await step("blocks mode, 1,000 turns", blocks(url))
    rows = [
        ("replay: valid facts (5 facts x 3 wordings x 5)", rep["valid"]),
        ("replay: LLM calls for exact repeats", rep["repeat_calls"]),
        ("replay: LLM calls in all (75 batches)", rep["calls"]),
        ("contradiction: one valid, old retired, both audited", con["ok"]),
        ("rollback restores the first", con["rollback_ok"]),
        ("hallucinated ids applied", ghost),
        ("turn p50 ms, facts off (100 ms model)", round(lat["off_ms"], 2)),
        ("turn p50 ms, facts on, in-process worker (100 ms model)", round(lat["on_ms"], 2)),
        ("latency ratio p50 (median of 3), 100 ms model", round(lat["ratio"], 3)),
        ("turn p50 ms, facts off / on (20 ms model)", f"{fast['off_ms']:.2f} / {fast['on_ms']:.2f}"),
        ("latency ratio p50 (median of 3), 20 ms model", round(fast["ratio"], 3)),
        ("memory LLM calls per 1,000 turns (facts on)", eco["calls"]),
        ("  extraction / reconciliation / summaries folded in / summaries alone", eco["kinds"]),
        ("prompt tokens per fact call (mean)", round(eco["prompt_tokens"], 1)),
        ("worker killed mid-batch: reclaimed, applied once", crashed),
        ("turns with the turn-0 fact out of view (1,000)", view["missing"]),
        ("  summary calls over those 1,000 turns", view["summaries"]),
        ("blocks: prompts over token_limit (1,000 turns)", blk["over"]),
        ("blocks: largest prompt (limit 2,000)", blk["max"]),
        ("blocks: priority-0 block in every prompt", blk["intact"]),
        ("blocks: memory LLM calls (fact block)", blk["memory_calls"]),
    ]
    print(f"server: {server}; scripted models")
    for name, value in rows:
        print(f"{name:<55} {value}")
    print(
        json.dumps(
            {
                "replay_valid_facts": rep["valid"],
                "replay_exact_repeat_calls": rep["repeat_calls"],
                "contradiction_ok": con["ok"],
                "rollback_ok": con["rollback_ok"],
                "hallucinated_applied": ghost,
                "latency_ratio_p50": round(lat["ratio"], 3),
                "calls_per_1000_turns": eco["calls"],
                "prompt_tokens_per_call": round(eco["prompt_tokens"], 1),
                "crash_reclaimed_once": crashed,
                "turns_fact_out_of_view": view["missing"],
                "blocks_turns_over_limit": blk["over"],
                "blocks_priority0_intact": blk["intact"],
            }
        )
    )


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--doomed-worker":
        asyncio.run(doomed_worker(sys.argv[2]))
    else:
        asyncio.run(main())
