"""Many users, one Assistant: 200 users x 20 turns at once on a local Redis, with a zero-latency model.

Every message carries its user's marker; the model echoes the message it was asked to answer. A reply or a
stored turn holding another user's marker is "foreign"; a reply or stored turn that is not there is
"missing". Also measured: turns/s, latency per turn (p50/p99) and the framework's CPU per turn (process CPU
time over turns: Python, redis-py, the event loop; the Redis server runs in its own process). Three
repeats, medians reported; then a single chat alone, turn after turn. Prints a table, then one JSON line.

`--language zh` asks in Chinese. Each user has no facts unless `--facts N` gives every user N facts first
(some about the question), so the turns search them and show the best in the prompt. `--settled` sets the
garbage collector as `brain serve` does (`roles.http.server.settle_heap`). `--users`, `--turns`,
`--repeats` and `--solo` make a reduced run (to profile: `python -m cProfile -s
cumtime benchmarks/concurrency.py --users 50 --turns 10 --repeats 1`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common.servers import local_redis
from brain import Settings, open_runtime
from brain.backends.redis.lean_send import LeanConnection
from brain.llm.protocol import ChatMessage, Completion, TextDelta, ToolCallDelta, ToolSpec
from brain.llm.usage import CallRecord, Usage, UsageLedger
from brain.memory.facts import Fact
from brain.runtime import Runtime
from brain.telemetry import TracedScript
from roles import Assistant

USERS, TURNS, REPEATS, SOLO = 200, 20, 3, 1_000  # the defaults of --users, --turns, --repeats, --solo
MARKER = re.compile(r"<U\d+R\d+>")
ZERO = Usage(prompt_tokens=0, completion_tokens=0, counted_locally=True)
FACTS = (
    "Goes to Oslo every May for a conference",
    "Packs light: one backpack, no checked bag",
    "Gets cold easily and packs a warm sweater",
    "Lives in Lisbon",
    "Is vegetarian",
    "Prefers trains to planes for short trips",
    "Runs every morning before work",
    "Has a dog called Rex",
)
"""What `--facts` gives each user (cycled, numbered): three of them about the benchmark's question."""
QUESTIONS = {
    "en": "{marker} turn {turn}: what should I pack for Oslo in May?",
    "zh": "{marker} 第{turn}轮：五月份我要去奥斯陆开会，应该带些什么衣服？",
}
"""Each turn's question by `--language`, with the user's marker and the turn's number."""
TRIPS: Counter[str] = Counter()
"""Commands sent to Redis by name ('pipeline' for a pipeline's), and the script calls among them by name."""


def count_round_trips() -> None:
    """Count every command and pipeline the client sends (`TRIPS`), and every script call by name, as
    they are packed: synchronously, so counting adds no frame or object to a call in flight (every object
    a turn holds while it waits is one more the garbage collector goes over)."""
    pack, packs, register = LeanConnection.pack_command, LeanConnection.pack_commands, TracedScript.__init__
    names: dict[str, str] = {}
    piped = [False]

    def counted_pack(self: LeanConnection, *args: Any) -> list[bytes]:
        if not piped[0]:
            command = str(args[0]).lower()
            TRIPS[command] += 1
            if command == "evalsha":
                TRIPS[f"script {names.get(str(args[1]), '?')}"] += 1
        return pack(self, *args)

    def counted_packs(self: LeanConnection, commands: Any) -> list[bytes]:
        TRIPS["pipeline"] += 1
        piped[0] = True
        try:
            return packs(self, commands)
        finally:
            piped[0] = False

    def named(self: TracedScript, script: Any, name: str) -> None:
        register(self, script, name)
        names[str(script.sha)] = name

    LeanConnection.pack_command = counted_pack  # type: ignore[method-assign]
    LeanConnection.pack_commands = counted_packs  # type: ignore[method-assign, assignment]
    TracedScript.__init__ = named  # type: ignore[method-assign]


class EchoLLM:
    """A zero-latency model: echoes the last message, streamed in two pieces."""

    model = "echo"

    def __init__(self) -> None:
        self.usage = UsageLedger()

    def _reply(self, messages: Sequence[ChatMessage]) -> Completion:
        self.usage.record(CallRecord(kind="stream", model=self.model, usage=ZERO, latency_s=0.0))
        text = f"echo: {messages[-1].content}"
        return Completion(content=text, finish_reason="stop", model=self.model, usage=ZERO)

    async def complete(self, messages: Sequence[ChatMessage], **_: Any) -> Completion:
        return self._reply(messages)

    async def stream(
        self, messages: Sequence[ChatMessage], *, tools: Sequence[ToolSpec] = (), **_: Any
    ) -> AsyncIterator[TextDelta | ToolCallDelta | Completion]:
        final = self._reply(messages)
        text = final.content or ""
        yield TextDelta(text=text[:6])
        yield TextDelta(text=text[6:])
        yield final

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[0.0] for _ in texts]

    async def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        return [0.0 for _ in documents]


async def one_user(
    assistant: Assistant,
    user: str,
    marker: str,
    chat: str,
    latencies: list[float],
    turns: int,
    question: str = QUESTIONS["en"],
) -> list[str]:
    replies = []
    for turn in range(turns):
        started = time.perf_counter()
        replies.append(await assistant.chat(user, chat, question.format(marker=marker, turn=turn)))
        latencies.append(time.perf_counter() - started)
    return replies


async def check(
    assistant: Assistant, replies: list[list[str] | BaseException], chat: str, rep: int, turns: int
) -> dict[str, int]:
    foreign = missing = errors = 0
    for u, got in enumerate(replies):
        marker = f"<U{u}R{rep}>"
        if isinstance(got, BaseException):
            errors += 1
            continue
        for reply in got:
            found = set(MARKER.findall(reply))
            foreign += bool(found - {marker})
            missing += marker not in found
        memory = await assistant.memory_of(f"user-{u}", chat)
        stored = await memory.read_history(1, 10 * turns)
        missing += max(2 * turns - len(stored), 0)
        foreign += sum(bool(set(MARKER.findall(t.message.content)) - {marker}) for t in stored)
    return {"foreign": foreign, "missing": missing, "errors": errors}


@contextlib.contextmanager
def collections_timed() -> Iterator[list[float]]:
    """The CPU seconds the garbage collector spends within the block (this thread's, where it runs: a
    collection preempted by another process is not counted longer), summed in the list it yields."""
    spent, started = [0.0], [0.0]

    def timed(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[0] = time.thread_time()
        else:
            spent[0] += time.thread_time() - started[0]

    gc.callbacks.append(timed)
    try:
        yield spent
    finally:
        gc.callbacks.remove(timed)


async def run(
    assistant: Assistant, rep: int, users: int, turns: int, question: str = QUESTIONS["en"]
) -> dict[str, float]:
    chat, latencies = f"run-{rep}", list[float]()
    TRIPS.clear()
    cpu, wall = time.process_time(), time.perf_counter()
    with collections_timed() as collector:
        replies = await asyncio.gather(
            *(
                one_user(assistant, f"user-{u}", f"<U{u}R{rep}>", chat, latencies, turns, question)
                for u in range(users)
            ),
            return_exceptions=True,
        )
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    trips = Counter(TRIPS)
    counts = await check(assistant, list(replies), chat, rep, turns)
    turns *= users
    return {
        **counts,
        "trips_per_turn": sum(n for k, n in trips.items() if not k.startswith("script ")) / turns,
        **{f"trips {k}": n / turns for k, n in sorted(trips.items())},
        "turns_per_s": turns / wall,
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": statistics.quantiles(latencies, n=100)[98] * 1000,
        "cpu_ms_per_turn": cpu * 1000 / turns,
        "gc_ms_per_turn": collector[0] * 1000 / turns,
    }


async def seed_facts(runtime: Runtime, users: int, count: int) -> None:
    """Give each of the `users` users `count` facts (`FACTS`, cycled and numbered past the first round)."""
    assert runtime.tiers is not None
    facts = runtime.tiers.facts
    texts = [
        FACTS[i % len(FACTS)] + (f" ({i // len(FACTS)})" if i >= len(FACTS) else "") for i in range(count)
    ]
    for u in range(users):
        await asyncio.gather(*(facts.add(f"user-{u}", Fact(text=text)) for text in texts))


async def single_chat(assistant: Assistant, turns: int) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    for turn in range(turns):
        await assistant.chat("solo", "alone", f"<U0R9> turn {turn}: what is the weather like in Oslo?")
    return turns / (time.perf_counter() - wall), (time.process_time() - cpu) * 1000 / turns


def options(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--users", type=int, default=USERS, help="users at once (default %(default)s)")
    parser.add_argument("--turns", type=int, default=TURNS, help="turns per user (default %(default)s)")
    parser.add_argument("--repeats", type=int, default=REPEATS, help="runs, medians reported (%(default)s)")
    parser.add_argument("--solo", type=int, default=SOLO, help="turns of the chat alone (%(default)s)")
    parser.add_argument("--facts", type=int, default=0, help="facts each user has (default %(default)s)")
    parser.add_argument(
        "--language", choices=sorted(QUESTIONS), default="en", help="the users' language (%(default)s)"
    )
    parser.add_argument(
        "--settled", action="store_true", help="the garbage collector as `brain serve` sets it (settle_heap)"
    )
    return parser.parse_args(argv)


async def main(
    users: int,
    turns: int,
    repeats: int,
    solo: int,
    settled: bool = False,
    facts: int = 0,
    language: str = "en",
) -> None:
    count_round_trips()
    with local_redis() as (url, server):
        settings = Settings.model_validate(  # the framework alone: no embedded embedder even when installed
            {"redis": {"url": url}, "llm": {"model": "gpt-4o-mini"}, "local": {"embedder": "off"}}
        )
        async with open_runtime(settings, llm=EchoLLM()) as runtime:
            assistant = Assistant.for_runtime(runtime)
            await seed_facts(runtime, users, facts)
            question = QUESTIONS[language]
            await one_user(assistant, "warm-up", "<U0R0>", "warm-up", [], turns, question)
            if settled:  # imported only then: a library's host need not load the HTTP server's modules
                from roles.http.server import settle_heap

                settle_heap()
            runs = [await run(assistant, rep + 1, users, turns, question) for rep in range(repeats)]
            solo_rate, solo_cpu = await single_chat(assistant, solo)
            busy = assistant.busy_chats
    gc = "as `brain serve` settles it" if settled else "Python's defaults"
    print(
        f"server: {server}; one Assistant, {users} users x {turns} turns at once ({language}), "
        f"{facts} facts each, "
        "zero-latency model"
    )
    print(f"garbage collector: {gc}")
    columns = ("turns_per_s", "p50_ms", "p99_ms", "cpu_ms_per_turn", "gc_ms_per_turn", "foreign", "missing")
    columns += ("errors",)
    print("repeat " + " ".join(f"{c:>15}" for c in columns))
    for i, r in enumerate(runs, 1):
        print(
            f"{i:>6} "
            + " ".join(f"{r[c]:>15.3f}" if c.endswith("_per_turn") else f"{r[c]:>15.0f}" for c in columns)
        )
    names = dict.fromkeys(k for r in runs for k in r)
    med = {k: statistics.median(r.get(k, 0.0) for r in runs) for k in names}
    cpu = f"{med['cpu_ms_per_turn']:.3f} ms CPU per turn ({med['gc_ms_per_turn']:.3f} of it the collector's)"
    print(f"median: {med['turns_per_s']:.0f} turns/s, p99 {med['p99_ms']:.1f} ms, {cpu}")
    print(f"one chat alone, turn after turn: {solo_rate:.0f} turns/s, {solo_cpu:.3f} ms CPU per turn")
    print(f"chat locks left after the runs: {busy}")
    trips = ", ".join(f"{k[6:]} {v:.2f}" for k, v in med.items() if k.startswith("trips "))
    print(f"Redis round trips per turn (median): {med['trips_per_turn']:.2f} ({trips})")
    print(
        json.dumps(
            {
                "users": users,
                "facts": facts,
                "language": language,
                "settled": settled,
                "turns": users * turns,
                "foreign": sum(int(r["foreign"]) for r in runs),
                "missing": sum(int(r["missing"]) for r in runs),
                "errors": sum(int(r["errors"]) for r in runs),
                "turns_per_s": round(med["turns_per_s"]),
                "p99_ms": round(med["p99_ms"], 2),
                "cpu_ms_per_turn": round(med["cpu_ms_per_turn"], 3),
                "gc_ms_per_turn": round(med["gc_ms_per_turn"], 3),
                "trips_per_turn": round(med["trips_per_turn"], 2),
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main(**vars(options())))
