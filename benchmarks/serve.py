"""`brain serve` under load, and MCP round trips, as users run them (every part its own process).

- A loopback OpenAI-compatible model (uvicorn, zero latency) streams back every `<Un>` marker its prompt
  holds: an answer with another client's marker means a prompt held another tenant's memory. It streams an
  answer in two pieces (`--pieces N`: N, as a real model streams hundreds, each costing the server its
  work per piece). Facts are on (the default): the servers' fact worker extracts from every turn, and the
  model answers its (non-streamed) requests with no facts, as for small talk (and a short summary when
  asked to fold turns into one).
- 500 clients, each with its own API key (its own tenant), say 20 turns each at once over HTTP
  (`POST /v1/chat`, server-sent events) against `brain serve --workers N` for N = 1, 2, 4, ... up to the
  cores here (`--cores`), then against two single-process servers on the same Redis (each client
  alternating between them). Counted: turns/s, p50/p99 per turn, errors, cross-tenant answers, every chat
  read back afterwards (only its own markers, none missing), the servers' CPU per turn (user + system
  time of the server processes and their workers, from /proc, over the load), the CPU shares of Redis, the
  model and the clients, and each worker count's turns/s per worker against one worker's.
- The clients run in `--client-procs` processes and the model in `--model-procs` (each cores / 4): on many
  cores one process of either would be the bottleneck, not the servers. `--redis-io-threads` for Redis.
- `--baseline REV`: the same load against one `brain serve` of another revision (a temporary worktree, or
  a directory holding that revision's tree, e.g. `git archive REV brain roles actions config`),
  for the CPU-per-turn ratio measured in the same run. `--repeats N` loads one worker (and the baseline,
  in turn with it, each going first in turn) N times and reports each figure's median: a noisy machine's
  ratio.
- A short load (two turns a client, one worker) goes first and is not measured: what a first load costs on a
  fresh machine stays out of the figures.
- MCP: `search_memories` round trips over stdio (`brain mcp`) and over streamable HTTP (`/mcp`).

Prints a table, then one JSON line.

    python benchmarks/serve.py [--clients 500 --turns 20] [--cores N] [--baseline e04a5d0 --repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from benchmarks.common.revision import revision_tree
from benchmarks.common.serve_load import load, process, servers
from benchmarks.common.servers import local_redis
from brain.backends.redis.api_keys import RedisApiKeyStore
from brain.backends.redis.client import TranslatingRedis

ROOT = Path(__file__).resolve().parent.parent
MODEL = """
import json, re, socket, sys
import uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

MARKER = re.compile(r"<U\\d+>")
PIECES = int(sys.argv[2]) if len(sys.argv) > 2 else 2  # the pieces an answer streams in (at least 2)

async def chat(request):
    body = await request.json()
    prompt = " ".join(m.get("content") or "" for m in body["messages"])
    if not body.get("stream"):  # the fact worker's extraction: a valid answer, no facts in small talk
        folds = "rolling summary" in prompt  # asked to fold turns into the summary in the same call
        content = '{"facts": [], "summary": "Small talk."}' if folds else '{"facts": []}'
        message = {"role": "assistant", "content": content}
        return JSONResponse({"id": "c", "object": "chat.completion", "created": 0, "model": body["model"],
                             "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                             "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}})
    text = "Noted " + " ".join(sorted(set(MARKER.findall(prompt)))) + "."
    async def events():
        for piece in (text[:6], text[6:], *[" and so on"] * (PIECES - 2)):
            delta = {"index": 0, "delta": {"role": "assistant", "content": piece}, "finish_reason": None}
            chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": body["model"],
                     "choices": [delta]}
            yield "data: " + json.dumps(chunk) + "\\n\\n"
        end = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": body["model"],
               "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
               "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}}
        yield "data: " + json.dumps(end) + "\\n\\ndata: [DONE]\\n\\n"
    return StreamingResponse(events(), media_type="text/event-stream")

app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])
# Several of these share the port (SO_REUSEPORT): a many-core load needs more than one model process.
sock = socket.socket()
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
sock.bind(("127.0.0.1", int(sys.argv[1])))
uvicorn.Server(uvicorn.Config(app, log_level="warning", backlog=4096)).run(sockets=[sock])
"""


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def mcp_round_trips(
    url: str, secret: str, env: dict[str, str], calls: int
) -> tuple[float, float, float]:
    args = {"query": "what should I pack for Oslo", "limit": 5}

    async def timed(client: Client) -> float:
        samples = []
        for _ in range(calls):
            started = time.perf_counter()
            result = await client.call_tool("search_memories", args)
            assert not result.is_error, result.content
            samples.append(time.perf_counter() - started)
        return statistics.median(samples) * 1000

    brain = brain_command(ROOT)
    stdio = StdioServerParameters(command=brain[0], args=[*brain[1:], "mcp", "--user", "user-0"], env=env)
    async with Client(stdio) as client:
        stdio_p50 = await timed(client)
    headers = {"Authorization": f"Bearer {secret}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
    ):
        http_p50 = await timed(client)
    return stdio_p50, http_p50, await asyncio.to_thread(raw_round_trips, url, secret, args, calls)


def raw_round_trips(url: str, secret: str, arguments: dict[str, object], calls: int) -> float:
    """The same tool call as one plain JSON-RPC POST per call (urllib, one connection each): what the
    server takes, without the SDK client's transport."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "search_memories", "arguments": arguments},
    }
    data = json.dumps(body).encode()
    headers = {
        "Authorization": f"Bearer {secret}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        with urllib.request.urlopen(
            urllib.request.Request(f"{url}/mcp", data=data, headers=headers)
        ) as reply:
            assert '"isError":false' in reply.read().decode()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000


def server_env(model_port: int, redis_url: str) -> dict[str, str]:
    """The environment of a benchmarked `brain serve`: the loopback model at `model_port`, that Redis."""
    return {
        **os.environ,
        "OPENAI_BASE_URL": f"http://127.0.0.1:{model_port}/v1",
        "OPENAI_API_KEY": "sk-bench",
        "BRAIN_REDIS_URL": redis_url,
        "BRAIN_CONFIG": "/dev/null",
        "BRAIN_LOCAL_EMBEDDER": "off",  # the service alone: no embedded embedder even when installed
    }


def brain_command(tree: Path) -> list[str]:
    """`brain` as the checkout at `tree` runs it (its own packages first on the path): no installed script
    needed, so a machine given only the tree and the dependencies runs it too."""
    code = f"import sys; sys.path.insert(0, {str(tree)!r}); from roles.cli import main; sys.exit(main())"
    return [sys.executable, "-c", code]


def revision_command(tree: Path) -> list[str]:
    """`brain serve` of the revision at `tree`, in one process as "workers 1" runs: a revision with
    `--workers` would otherwise start one per core."""
    parser = tree / "roles" / "cli" / "parser.py"
    one = ["--workers", "1"] if parser.exists() and '"--workers"' in parser.read_text() else []
    return [*brain_command(tree), "serve", "--port", "0", *one]


def median_of(runs: list[dict[str, float]]) -> dict[str, float]:
    """Each figure's median over `runs` (errors and cross-tenant answers: their sum)."""
    summed = ("errors", "cross_tenant")
    return {
        key: sum(r[key] for r in runs) if key in summed else statistics.median(r[key] for r in runs)
        for key in runs[0]
    }


def worker_counts(cores: int) -> list[int]:
    """1, 2, 4, ... up to `cores` (and `cores` itself)."""
    counts, n = [], 1
    while n < cores:
        counts.append(n)
        n *= 2
    return [*counts, cores]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=500)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--mcp-calls", type=int, default=200)
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 1, help="largest worker count")
    parser.add_argument("--baseline", metavar="REV", help="also measure one `brain serve` of REV")
    parser.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="loads of one worker (and of the baseline, in turn with it): medians reported",
    )
    helpers = max(1, (os.cpu_count() or 1) // 4)
    parser.add_argument(
        "--client-procs", type=int, default=helpers, help="processes running the clients (cores / 4)"
    )
    parser.add_argument(
        "--model-procs", type=int, default=helpers, help="loopback model processes (cores / 4)"
    )
    parser.add_argument("--redis-io-threads", type=int, default=1, help="the Redis server's I/O threads")
    parser.add_argument(
        "--pieces", type=int, default=2, help="pieces the model streams an answer in (at least 2; default 2)"
    )
    options = parser.parse_args()
    began = time.monotonic()
    results: dict[str, dict[str, float]] = {}
    baseline = revision_tree(options.baseline) if options.baseline else contextlib.nullcontext(None)
    with local_redis(options.redis_io_threads) as (redis_url, described), baseline as tree:
        port = free_port()
        env = server_env(port, redis_url)
        serve = [*brain_command(ROOT), "serve", "--port", "0"]
        with contextlib.ExitStack() as models:
            model_pids = tuple(
                models.enter_context(
                    process([sys.executable, "-c", MODEL, str(port), str(options.pieces)], env)
                ).pid
                for _ in range(options.model_procs)
            )
            client = TranslatingRedis.from_url(redis_url)
            keys = RedisApiKeyStore(client)
            secrets = [(await keys.create(f"user-{u}"))[1] for u in range(options.clients)]
            redis_pid = int((await client.info("server"))["process_id"])
            await client.aclose()

            async def measured(urls: list[str], pids: list[int], chat: str) -> dict[str, float]:
                r = await load(
                    urls, pids, secrets, options.turns, chat, options.client_procs, redis_pid, model_pids
                )
                print(  # progress, as each load ends: the table comes at the end
                    f"[{time.monotonic() - began:5.0f} s] {chat}: {r['turns_per_s']:.0f} turns/s, "
                    f"p50 {r['p50_ms']:.1f} ms, {r['errors']:.0f} errors, "
                    f"{r['cpu_ms_per_turn']:.2f} ms CPU per turn; CPU%: Redis {r['redis_cpu_pct']:.0f}, "
                    f"model {r['model_cpu_pct']:.0f}, clients {r['clients_cpu_pct']:.0f}",
                    file=sys.stderr,
                    flush=True,
                )
                return r

            # not measured: whatever a first load costs (modules compiled and read, Redis's memory grown). A
            # fresh 16-core machine's first load measured one worker at 1.71 ms of CPU per turn; a machine of
            # the same kind whose first load was another measured it at 1.18
            async with servers([[*serve, "--workers", "1"]], env) as (urls, pids):
                await load(urls, pids, secrets, 2, "warm-up", options.client_procs, redis_pid, model_pids)
            print(f"[{time.monotonic() - began:5.0f} s] warm-up load done", file=sys.stderr, flush=True)
            paired: dict[str, list[dict[str, float]]] = {"baseline": [], "workers 1": []}
            for rep in range(options.repeats):  # the baseline and one worker in turn, each first in turn
                sides: list[tuple[str, list[list[str]], str | None]] = [
                    ("workers 1", [[*serve, "--workers", "1"]], None)
                ]
                if tree is not None:
                    sides.insert(rep % 2, ("baseline", [revision_command(tree)], str(tree)))
                for name, commands, cwd in sides:
                    async with servers(commands, env, cwd=cwd) as (urls, pids):
                        paired[name].append(await measured(urls, pids, f"{name}-{rep}"))
            results.update({name: median_of(runs) for name, runs in paired.items() if runs})
            for n in worker_counts(options.cores):
                async with servers([[*serve, "--workers", str(n)]], env) as (urls, pids):
                    if n > 1:
                        results[f"workers {n}"] = await measured(urls, pids, f"w{n}")
                    else:
                        stdio_p50, http_p50, raw_p50 = await mcp_round_trips(
                            urls[0], secrets[0], env, options.mcp_calls
                        )
            async with servers([[*serve, "--workers", "1"]] * 2, env) as (urls, pids):
                results["two servers"] = await measured(urls, pids, "two")
    shape = f"{options.clients} clients x {options.turns} turns"
    print(
        f"redis: {described}; model: loopback, zero latency, {options.model_procs} process(es); {shape} "
        f"from {options.client_procs} client process(es); {os.cpu_count()} cores here"
        + (f"; baseline: {options.baseline}" if options.baseline else "")
    )
    print(
        f"{'servers':>16} {'turns/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7} {'cross':>6} "
        f"{'CPU ms/turn':>12} {'per worker':>11} {'CPU%: redis':>12} {'model':>6} {'clients':>8}"
    )
    one_rate = results["workers 1"]["turns_per_s"]
    for name, r in results.items():  # each worker count's turns/s per worker against one worker's
        if name.startswith("workers"):
            r["per_worker_vs_one"] = r["turns_per_s"] / (int(name.split()[1]) * one_rate)
    for name, r in results.items():
        share = f"{r['per_worker_vs_one']:>10.2f}x" if "per_worker_vs_one" in r else f"{'':>11}"
        print(
            f"{name:>16} {r['turns_per_s']:>9.0f} {r['p50_ms']:>8.1f} {r['p99_ms']:>8.1f} "
            f"{r['errors']:>7.0f} {r['cross_tenant']:>6.0f} {r['cpu_ms_per_turn']:>12.2f} {share} "
            f"{r['redis_cpu_pct']:>12.0f} {r['model_cpu_pct']:>6.0f} {r['clients_cpu_pct']:>8.0f}"
        )
    print(
        f"MCP search_memories round trip p50: stdio {stdio_p50:.2f} ms, HTTP {http_p50:.2f} ms "
        f"(SDK client), {raw_p50:.2f} ms (one plain JSON-RPC POST)"
    )
    one, two, base = results["workers 1"], results["two servers"], results.get("baseline")
    workers = [
        {
            "n": int(name.split()[1]),
            **{k: round(r[k], 1) for k in ("turns_per_s", "p50_ms", "p99_ms")},
            "errors": int(r["errors"]),
            "cpu_ms_per_turn": round(r["cpu_ms_per_turn"], 3),
            **{k: round(r[k]) for k in ("redis_cpu_pct", "model_cpu_pct", "clients_cpu_pct")},
            "per_worker_vs_one": round(r["per_worker_vs_one"], 2),
        }
        for name, r in results.items()
        if name.startswith("workers")
    ]
    print(
        json.dumps(
            {
                "cores": os.cpu_count(),
                "client_procs": options.client_procs,
                "model_procs": options.model_procs,
                "clients": options.clients,
                "repeats": options.repeats,
                "turns": options.clients * options.turns,
                "turns_per_s": round(one["turns_per_s"]),
                "p50_ms": round(one["p50_ms"], 1),
                "p99_ms": round(one["p99_ms"], 1),
                "errors": int(one["errors"]),
                "cpu_ms_per_turn": round(one["cpu_ms_per_turn"], 3),
                "workers": workers,
                "cross_tenant": int(sum(r["cross_tenant"] for r in results.values())),
                "two_process_errors": int(two["errors"]),
                "two_process_turns_per_s": round(two["turns_per_s"]),
                "baseline": options.baseline,
                "baseline_turns_per_s": None if base is None else round(base["turns_per_s"]),
                "baseline_cpu_ms_per_turn": None if base is None else round(base["cpu_ms_per_turn"], 3),
                "cpu_ratio_vs_baseline": None
                if base is None
                else round(one["cpu_ms_per_turn"] / base["cpu_ms_per_turn"], 3),
                "mcp_stdio_p50_ms": round(stdio_p50, 2),
                "mcp_http_p50_ms": round(http_p50, 2),
                "mcp_http_raw_p50_ms": round(raw_p50, 2),
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
