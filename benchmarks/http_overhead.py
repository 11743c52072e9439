"""Per-turn framework overhead on the real HTTP path: the official `openai` client against a scripted
OpenAI-compatible server on loopback (its own process), memory on a local Redis.

- raw: a streamed `client.chat.completions.create` with one user message, read to the end;
- turn: `Assistant.chat` in a chat that already has 500 turns, through `OpenAILLM` (same server, same reply).

Both send the same streamed reply; the difference of the medians is what the framework adds to a turn
(Redis load and write, prompt building, the request's encoding). Interleaved, several repeats. The settings
are the defaults (facts on: the in-process worker extracts in the background), so the server answers every
request by its purpose (`benchmarks.common.scripted_model.kind_of`: the turn gets the fixed reply, memory
tasks an empty but valid answer) and cannot run out of script whatever the defaults ask. Prints a table and
the calls of each purpose, then one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import openai

from benchmarks.common.servers import local_redis
from brain import LLMSettings, Message, Settings, open_runtime
from brain.llm.openai_client import OpenAILLM
from roles import Assistant

ROOT = Path(__file__).resolve().parent.parent
HISTORY, SAMPLES, REPEATS = 500, 200, 3
REPLY = "Pack a rain jacket, layers and good walking shoes; May in Oslo is cool and often wet."
SERVER = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
from benchmarks.http_overhead import serve_model
serve_model()
"""


def serve_model() -> None:
    """The scripted server's process: prints its URL, serves until a line on stdin, then prints the calls
    it answered, by purpose, as one JSON line."""
    from benchmarks.common.scripted_model import kind_of, reply_for
    from tests.support.openai_server import Chat, Recorded, Reply, ScriptedOpenAIServer

    calls: Counter[str] = Counter()

    class ByPurpose(ScriptedOpenAIServer):
        """Answers each request by its purpose: never runs out, whatever the run asks."""

        def _next(self, request: Recorded) -> Reply | None:
            kind = kind_of(request.body.get("messages") or [])
            with self._lock:
                calls[kind] += 1
            text = REPLY if kind == "answer" else reply_for(kind, request.body)[0]
            return Chat(text, usage=(50, 20))

    server = ByPurpose().start()
    print(server.url, flush=True)
    sys.stdin.readline()
    server.stop()
    print(json.dumps(dict(calls)), flush=True)


async def raw_call(client: openai.AsyncOpenAI) -> float:
    started = time.perf_counter()
    stream = await client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "What should I pack?"}], stream=True
    )
    async for _ in stream:
        pass
    return time.perf_counter() - started


async def turn(assistant: Assistant, i: int) -> float:
    started = time.perf_counter()
    await assistant.chat("bench", "http", f"Question {i}: what should I pack for Oslo in May?")
    return time.perf_counter() - started


async def fill(assistant: Assistant) -> None:
    memory = await assistant.memory_of("bench", "http")
    for i in range(HISTORY // 2):
        memory.add_talk(
            Message(content=f"Earlier question {i} about the trip to Oslo and what to see there?")
        )
        memory.add_answer(Message(content=f"Earlier answer {i}: the fjords, the museums, and {REPLY}"))
    await memory.dumps()


def start_server() -> subprocess.Popen[str]:
    """The scripted server in its own process, so its work does not share this process's interpreter."""
    return subprocess.Popen(
        [sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )


async def main() -> None:
    server = start_server()
    assert server.stdout is not None and server.stdin is not None
    url = server.stdout.readline().strip()
    llm_settings = LLMSettings(base_url=url, api_key="sk-bench", max_retries=0)
    try:
        with local_redis() as (redis_url, redis_server):
            settings = Settings.model_validate(
                {"redis": {"url": redis_url}, "llm": llm_settings.model_dump(), "local": {"embedder": "off"}}
            )
            raw_client = openai.AsyncOpenAI(base_url=url, api_key="sk-bench", max_retries=0)
            async with (
                OpenAILLM.from_settings(llm_settings) as llm,
                open_runtime(settings, llm=llm) as runtime,
            ):
                assistant = Assistant.for_runtime(runtime)
                await fill(assistant)
                for i in range(20):  # warm both paths: connections, caches, scripts
                    await raw_call(raw_client)
                    await turn(assistant, i)
                rows = []
                for _ in range(REPEATS):
                    raws, turns = [], []
                    for i in range(SAMPLES):
                        raws.append(await raw_call(raw_client))
                        turns.append(await turn(assistant, i))
                    rows.append((statistics.median(raws) * 1000, statistics.median(turns) * 1000))
                prompt = len(llm.usage.records)
            await raw_client.close()
    finally:
        server.stdin.write("\n")
        server.stdin.flush()
        calls = json.loads(server.stdout.readline() or "{}")
        server.wait(timeout=10)
    print(f"redis: {redis_server}; LLM: scripted OpenAI-compatible server (loopback, own process)")
    print(
        f"a chat with {HISTORY} turns before; {REPEATS} repeats x {SAMPLES} raw calls and turns, interleaved"
    )
    print(f"{'repeat':>6} {'raw p50 ms':>11} {'turn p50 ms':>12} {'overhead ms':>12}")
    for i, (raw, full) in enumerate(rows, 1):
        print(f"{i:>6} {raw:>11.2f} {full:>12.2f} {full - raw:>12.2f}")
    raw_p50 = statistics.median(r for r, _ in rows)
    turn_p50 = statistics.median(t for _, t in rows)
    print(f"median of the repeats: overhead {turn_p50 - raw_p50:.2f} ms per turn ({prompt} LLM calls made)")
    print("calls the server answered, by purpose: " + ", ".join(f"{k} {n}" for k, n in sorted(calls.items())))
    print(
        json.dumps(
            {
                "raw_p50_ms": round(raw_p50, 3),
                "turn_p50_ms": round(turn_p50, 3),
                "overhead_p50_ms": round(turn_p50 - raw_p50, 3),
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
