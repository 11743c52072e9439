"""Recall quality: can conversation search find a fact told long ago among thousands of distractor turns?

A seeded generator writes multi-session conversations (2,000 turns each, sessions days apart) with facts
planted at random turns, and questions that paraphrase them (some share a name or a word with the fact,
some share nothing). Reports recall@5 and recall@10 of the planted turn for lexical search, and, when an
embeddings endpoint is given (--base-url, --model, OPENAI_API_KEY), for vector and fused (RRF) search.
Prints a table, then one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


from benchmarks.common.servers import local_redis
from benchmarks.common.stores import redis_index
from brain import LLMSettings, OpenAILLM
from brain.backends.redis.client import TranslatingRedis
from brain.keys import archival_base
from brain.search.index import IndexedDoc

NAMES = ["Bea", "Carl", "Dina", "Emil", "Frida", "Gus", "Hanna", "Ivo", "Jonas", "Kari", "Lena", "Mats"]
CITIES = ["Lisbon", "Bergen", "Tromso", "Porto", "Krakow", "Tallinn", "Ghent", "Turin", "Lyon", "Graz"]
FACTS = [  # (fact, question) templates: the question paraphrases the fact
    ("My sister {name} moved to {city} last spring.", "Where does {name} live now?"),
    ("I keep the spare house key under the blue flower pot.", "Where is the extra key for my home hidden?"),
    ("My doctor said I am allergic to penicillin.", "Which antibiotic should I avoid?"),
    ("Our wedding anniversary is on the {day}th of {month}.", "When do we celebrate getting married?"),
    ("I parked the car on level {level} of the airport garage.", "On which floor did I leave the car?"),
    ("{name} lent me {amount} euros for the concert tickets.", "How much money do I owe {name}?"),
    ("The wifi password at the cabin is written inside the fuse box.", "How do I get online at the cabin?"),
    ("My boss {name} wants the quarterly report by Thursday.", "When is the report due for {name}?"),
]
CHATTER = (
    "weather rain sun coffee lunch meeting email train bus traffic movie series book podcast gym run "
    "walk dinner recipe pasta salad soup weekend plan shopping groceries laundry news music song "
    "phone laptop update bug code review deploy invoice budget trip hotel flight museum park"
).split()
MONTHS = ["March", "April", "May", "June", "July", "August"]


def conversation(
    rng: random.Random, turns: int, facts: int
) -> tuple[list[IndexedDoc], list[tuple[str, str]]]:
    docs, questions = [], []
    planted = set(rng.sample(range(turns), facts))
    ts = 1_700_000_000.0
    for i in range(turns):
        ts += rng.choice([30, 60, 120]) if i % 200 else 3 * 86_400  # a new session every 200 turns
        speaker = "User" if i % 2 == 0 else "Assistant"
        if i in planted:
            fact, question = rng.choice(FACTS)
            values = {
                "name": rng.choice(NAMES),
                "city": rng.choice(CITIES),
                "day": rng.randint(2, 28),
                "month": rng.choice(MONTHS),
                "level": rng.randint(2, 9),
                "amount": rng.randint(20, 90),
            }
            text = "User: " + fact.format(**values)
            questions.append((question.format(**values), f"t{i}"))
        else:
            text = f"{speaker}: " + " ".join(rng.choices(CHATTER, k=rng.randint(6, 25))) + "."
        docs.append(IndexedDoc(id=f"t{i}", text=text, ts=ts))
    return docs, questions


def recall_at(ranks: list[int | None], k: int) -> float:
    return sum(1 for r in ranks if r is not None and r < k) / len(ranks)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", help="an OpenAI-compatible endpoint with an embeddings model")
    parser.add_argument("--model", default="text-embedding-3-small")
    args = parser.parse_args()
    rng = random.Random(7)
    modes: dict[str, list[int | None]] = {"lexical": [], "vector": [], "fused": []}
    llm = None
    if args.base_url:
        llm = OpenAILLM.from_settings(LLMSettings(base_url=args.base_url, embedding_model=args.model))
    n_conv, n_turns, n_facts = 5, 2_000, 20
    with local_redis() as (url, server):
        client = TranslatingRedis.from_url(url)
        for c in range(n_conv):
            docs, questions = conversation(rng, n_turns, n_facts)
            index = redis_index(client, archival_base("brain", f"recall-quality-{c}"))
            vectors = None
            if llm is not None:
                vectors = []
                for s in range(0, len(docs), 256):
                    vectors += await llm.embed([d.text for d in docs[s : s + 256]])
            for start in range(0, len(docs), 200):
                await index.add_many(
                    docs[start : start + 200], vectors[start : start + 200] if vectors else None
                )
            for question, target in questions:
                lexical = [h.doc.id for h in (await index.search(question, limit=10))[0]]
                modes["lexical"].append(lexical.index(target) if target in lexical else None)
                if llm is not None:
                    vector = (await llm.embed([question]))[0]
                    nearest = [h.doc.id for h in await index.vector_search(vector, limit=10)]
                    fused = [h.doc.id for h in (await index.search(question, vector=vector, limit=10))[0]]
                    modes["vector"].append(nearest.index(target) if target in nearest else None)
                    modes["fused"].append(fused.index(target) if target in fused else None)
            await index.drop()
        await client.aclose()
    if llm is not None:
        await llm.aclose()
    questions_total = len(modes["lexical"])
    print(f"server: {server}; {n_conv} conversations x {n_turns} turns, {questions_total} planted facts")
    print(f"{'mode':>8} | {'recall@5':>8} | {'recall@10':>9}")
    result: dict[str, object] = {"conversations": n_conv, "turns": n_turns, "questions": questions_total}
    for mode, ranks in modes.items():
        if not ranks:
            print(f"{mode:>8} | not measured: no embeddings endpoint given (--base-url)")
            result[mode] = None
            continue
        r5, r10 = recall_at(ranks, 5), recall_at(ranks, 10)
        print(f"{mode:>8} | {r5:>8.2f} | {r10:>9.2f}")
        result[mode] = {"recall@5": round(r5, 3), "recall@10": round(r10, 3)}
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main())
