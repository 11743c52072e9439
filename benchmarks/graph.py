"""Graph memory: what it costs, whether it finds what plain search misses, how fast it is.

1. Cost: the English dev-set conversations (`benchmarks/retrieval_dev`) go through `remember_graph` in
   batches of 20 turns, as the fact worker sends them, with a scripted model that "extracts" by rules
   (names, "moved to", "a job at", "adopted", "my sister") and retires what a move or a new job
   contradicts. LLM calls and tokens (prompt and completion, counted with the gpt-4o-mini tokenizer) per
   1,000 turns.
2. Multi-hop recall@5: planted two-hop questions ("Where does the sister of the person who adopted
   Biscuit live?"), each answered by a turn that shares no word with it ("I moved to Porto in March"),
   among distractors; `conversation_search` of the tiered assistant with graph memory off and on.
3. Latency at 10,000 entities and 100,000 relations: writing one relation, and one entity's
   neighbourhood (its current relations and the entities at their ends).

    python benchmarks/graph.py [--entities 10000 --relations 100000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import redis.asyncio as aioredis

from actions.remember_graph import remember_graph
from benchmarks.common.servers import local_redis
from benchmarks.common.stores import redis_tiers
from benchmarks.retrieval_dev.generate import generate
from brain import MemorySettings
from brain.backends.redis.client import TranslatingRedis
from brain.llm.protocol import ToolCall
from brain.memory.graph import Relation
from brain.message import Message
from brain.runtime import local_runtime
from brain.settings import FactSettings, GraphSettings, Settings
from brain.testing import ScriptedCall, ScriptedLLM, tool_calls
from roles.modes.tiered import recall_doc
from roles.tiered import TieredAssistant

SETTINGS = GraphSettings(enabled=True)
RULES = [
    (re.compile(r"adopted (?:a|an) \w+ (?:named|called) ([A-Z]\w+)"), "adopted", "animal", False),
    (re.compile(r"[Mm]y sister ([A-Z]\w+)"), "sister_of", "person", True),
    (
        re.compile(r"(?:moved to|live in|moving again, this time to|a flat in) ([A-Z]\w+)"),
        "lives_in",
        "place",
        False,
    ),
    (
        re.compile(r"(?:a job as an? [\w ]+? at|now an? [\w ]+? at) ([A-Z]\w+)"),
        "works_at",
        "organisation",
        False,
    ),
]


def rule_extractor(call: ScriptedCall) -> Any:
    """A scripted model: `record_graph` by the rules above; `retire_relations` for every relation shown
    (a move or a new job replaces the old one)."""
    text = call.messages[-1].content or ""
    if call.tools and call.tools[0].name == "retire_relations":
        shown = len(re.findall(r"^\d+\. ", text.split("New relations")[0], re.MULTILINE))
        return tool_calls(("retire_relations", {"ids": list(range(shown)), "reason": "replaced"}))
    entities: dict[str, dict[str, Any]] = {}
    relations = []
    for line in text.splitlines()[1:]:
        speaker, _, said = line.partition(": ")
        for pattern, relation, kind, reverse in RULES:
            for name in pattern.findall(said):
                entities.setdefault(speaker, {"name": speaker, "type": "person"})
                entities.setdefault(name, {"name": name, "type": kind})
                source, target = (name, speaker) if reverse else (speaker, name)
                relations.append({"source": source, "relation": relation, "target": target})
    return tool_calls(("record_graph", {"entities": list(entities.values()), "relations": relations}))


def scripted() -> ScriptedLLM:
    return ScriptedLLM([rule_extractor] * 100_000)


def messages(turns: Sequence[Any]) -> list[Message]:
    return [Message(id=t.id, sent_from=t.speaker, content=t.text) for t in turns]


async def cost(client: aioredis.Redis) -> dict[str, float]:
    graph, llm = redis_tiers(client, prefix="bench-cost").graph, scripted()
    turns = 0
    for number, conv in enumerate(generate("en")):
        batch = messages(conv.turns)
        for start in range(0, len(batch), 20):
            await remember_graph(llm, graph, f"user-{number}", batch[start : start + 20], SETTINGS)
        turns += len(batch)
    totals = llm.usage.totals()
    checks = sum(1 for c in llm.calls if c.tools and c.tools[0].name == "retire_relations")
    per = 1000 / turns
    print(f"\n[cost] {turns} turns in batches of 20: {totals.calls} calls ({checks} contradiction checks)")
    print(
        f"  per 1,000 turns: {totals.calls * per:.1f} calls, {totals.prompt_tokens * per:.0f} prompt + "
        f"{totals.completion_tokens * per:.0f} completion tokens"
    )
    return {
        "calls_per_1000_turns": round(totals.calls * per, 1),
        "tokens_per_1000_turns": round((totals.prompt_tokens + totals.completion_tokens) * per),
    }


PEOPLE = ["Caroline", "Joanna", "Priya", "Lena", "Marta", "Aiko", "Sofia", "Nadia", "Elena", "Grace"]
SISTERS = ["Melanie", "Hannah", "Rosa", "Ingrid", "Chloe", "Yuki", "Clara", "Leila", "Daria", "Ivy"]
PETS = ["Biscuit", "Pepper", "Mochi", "Rex", "Luna", "Ziggy", "Olive", "Bruno", "Pixel", "Nutmeg"]
ANIMALS = ["dog", "cat", "rabbit", "parrot", "tortoise"]
CITIES = ["Porto", "Lisbon", "Oslo", "Kyoto", "Lyon", "Tallinn", "Seville", "Gdansk", "Bergen", "Turin"]
SMALL_TALK = [
    "{p}: The weather was lovely today, we had lunch outside.",
    "{p}: I live for weekends like this one, so relaxing.",
    "{p}: Did you see the match last night? What a finish.",
    "{p}: Work has been busy, lots of meetings this week.",
    "{p}: My neighbour lives in a house with a huge garden.",
    "{p}: We tried a new recipe for dinner, it was a bit too spicy.",
]


def planted(rng: random.Random) -> tuple[list[Message], list[tuple[str, str]]]:
    """Turns of one long chat, and (question, evidence turn id) pairs."""
    turns: list[Message] = []
    questions = []

    def say(speaker: str, text: str) -> str:
        turns.append(Message(id=f"m{len(turns)}", sent_from=speaker, content=text))
        return turns[-1].id

    for i, (person, sister, pet) in enumerate(zip(PEOPLE, SISTERS, PETS, strict=True)):
        for _ in range(30):
            speaker = rng.choice([*PEOPLE, *SISTERS])
            say(speaker, rng.choice(SMALL_TALK).format(p=speaker).split(": ", 1)[1])
        say(person, f"We adopted a {rng.choice(ANIMALS)} named {pet} last month!")
        say(person, f"My sister {sister} is coming over to meet {pet} next week.")
        for _ in range(10):
            speaker = rng.choice([*PEOPLE, *SISTERS])
            say(speaker, rng.choice(SMALL_TALK).format(p=speaker).split(": ", 1)[1])
        evidence = say(sister, f"I moved to {CITIES[i]} in March, the old town is wonderful.")
        questions.append((f"Where does the sister of the person who adopted {pet} live?", evidence))
        questions.append((f"Which city is the sister of {pet}'s owner living in now?", evidence))
    return turns, questions


async def multihop(client: aioredis.Redis) -> dict[str, float]:
    settings = Settings(memory=MemorySettings(facts=FactSettings(enabled=False), graph=SETTINGS))
    agent = TieredAssistant(local_runtime(ScriptedLLM([]), settings=settings, client=client))
    turns, questions = planted(random.Random(11))
    tools = agent.tools("hop-user", "chat")
    await tools.recall.drop()
    await tools.recall.add_many([recall_doc(m) for m in turns])
    llm = scripted()
    for start in range(0, len(turns), 20):
        await remember_graph(llm, agent.tiers.graph, "hop-user", turns[start : start + 20], SETTINGS)
    plain = agent.tools("hop-user", "chat")
    plain.linked = None  # the same search without the graph
    results: dict[str, list[float]] = {"plain": [], "graph": []}
    for question, evidence in questions:
        for mode, tool in (("plain", plain), ("graph", tools)):
            arguments = json.dumps({"query": question})
            outcome = await tool.invoke(ToolCall(id="q", name="conversation_search", arguments=arguments))
            found = [r["id"] for r in json.loads(outcome.result)["results"]]
            results[mode].append(float(evidence in found[:5]))
    r_plain, r_graph = statistics.mean(results["plain"]), statistics.mean(results["graph"])
    print(f"\n[multi-hop] {len(questions)} two-hop questions over {len(turns)} turns, {len(PEOPLE)} families")
    print(f"  recall@5 plain {r_plain:.3f}  graph-boosted {r_graph:.3f}")
    return {"multihop_r5_plain": round(r_plain, 3), "multihop_r5_graph": round(r_graph, 3)}


async def latency(client: aioredis.Redis, n_entities: int, n_relations: int) -> dict[str, float]:
    graph, user, rng = redis_tiers(client, prefix="bench-lat").graph, "big-user", random.Random(5)
    started = time.perf_counter()
    ids: list[str] = []
    for start in range(0, n_entities, 1000):
        ids += await graph.upsert(
            user, [(f"Entity {i}", "thing", []) for i in range(start, min(start + 1000, n_entities))]
        )
    verbs = ["knows", "works_with", "lives_near", "likes", "visited"]

    async def one(k: int) -> None:
        a, b = rng.sample(ids, 2)
        await graph.relate(user, Relation(source=a, relation=verbs[k % 5], target=b, source_turns=(f"t{k}",)))

    for start in range(0, n_relations, 50):
        await asyncio.gather(*(one(k) for k in range(start, min(start + 50, n_relations))))
    loaded = time.perf_counter() - started
    print(f"\n[latency] loaded {n_entities} entities, {n_relations} relations in {loaded:.1f} s")
    writes, reads = [], []
    for k in range(300):
        t0 = time.perf_counter()
        await one(n_relations + k)
        writes.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        around = await graph.neighbourhood(user, [rng.choice(ids)], limit=50)
        reads.append((time.perf_counter() - t0) * 1000)
    assert around.entities
    w, r = statistics.median(writes), statistics.median(reads)
    print(f"  write one relation p50 {w:.2f} ms (p95 {statistics.quantiles(writes, n=20)[18]:.2f})")
    print(f"  neighbourhood of one entity p50 {r:.2f} ms (p95 {statistics.quantiles(reads, n=20)[18]:.2f})")
    return {"write_p50_ms": round(w, 3), "neighbourhood_p50_ms": round(r, 3)}


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entities", type=int, default=10_000)
    parser.add_argument("--relations", type=int, default=100_000)
    args = parser.parse_args()
    with local_redis() as (url, server):
        client = TranslatingRedis.from_url(url)
        print(f"server: {server}")
        await client.flushall()
        summary = await cost(client)
        summary |= await multihop(client)
        summary |= await latency(client, args.entities, args.relations)
        await client.aclose()
    print(json.dumps(summary))


if __name__ == "__main__":
    asyncio.run(main())
