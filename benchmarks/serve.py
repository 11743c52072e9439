"""`brain serve` under load, and MCP round trips, as users run them (every part its own process).

- A loopback OpenAI-compatible model (uvicorn, zero latency) streams back every `<Un>` marker its prompt
  holds: an answer with another client's marker means a prompt held another tenant's memory.
- 500 clients, each with its own API key (its own tenant), say 20 turns each at once over HTTP
  (`POST /v1/chat`, server-sent events), against one `brain serve`, then against two on the same Redis
  (each client alternating between them). Counted: turns/s, p50/p99 per turn, errors, cross-tenant
  answers, and afterwards every chat is read back (40 turns each, only its own markers).
- MCP: `search_memories` round trips over stdio (`brain mcp`) and over streamable HTTP (`/mcp`).

Prints a table, then one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from benchmarks.common.servers import local_redis
from brain.backends.redis.api_keys import RedisApiKeyStore
from brain.backends.redis.client import TranslatingRedis

BRAIN = str(Path(sys.executable).parent / "brain")
MARKER = re.compile(r"<U\d+>")
MODEL = """
import json, re, sys
import uvicorn
from starlette.applications import Starlette
from starlette.responses import StreamingResponse
from starlette.routing import Route

MARKER = re.compile(r"<U\\d+>")

async def chat(request):
    body = await request.json()
    prompt = " ".join(m.get("content") or "" for m in body["messages"])
    text = "Noted " + " ".join(sorted(set(MARKER.findall(prompt)))) + "."
    async def events():
        for piece in (text[:6], text[6:]):
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
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def process(args: list[str], env: dict[str, str], capture: bool = False) -> Iterator[subprocess.Popen[str]]:
    child = subprocess.Popen(
        args,
        env=env,
        text=True,
        stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield child
    finally:
        child.send_signal(signal.SIGINT)
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()


async def ready(url: str, path: str = "/readyz") -> None:
    async with httpx2.AsyncClient(timeout=5) as http:
        for _ in range(400):
            with contextlib.suppress(httpx2.TransportError):
                if (await http.get(url + path)).status_code < 500:
                    return
            await asyncio.sleep(0.05)
    raise SystemExit(f"{url} never got ready")


@contextlib.asynccontextmanager
async def servers(n: int, env: dict[str, str]) -> AsyncIterator[list[str]]:
    with contextlib.ExitStack() as stack:
        urls = []
        for _ in range(n):
            child = stack.enter_context(process([BRAIN, "serve", "--port", "0"], env, capture=True))
            assert child.stdout is not None
            urls.append(child.stdout.readline().split()[2])
        for url in urls:
            await ready(url)
        yield urls


async def load(urls: list[str], secrets: list[str], turns: int, chat: str) -> dict[str, float]:
    latencies: list[float] = []
    errors = foreign = 0
    limits = httpx2.Limits(max_connections=len(secrets), max_keepalive_connections=len(secrets))

    async with httpx2.AsyncClient(timeout=120, limits=limits) as http:

        async def one(u: int) -> None:
            nonlocal errors, foreign
            headers = {"Authorization": f"Bearer {secrets[u]}"}
            for t in range(turns):
                url = urls[(u + t) % len(urls)]
                body = {"chat_id": chat, "text": f"<U{u}> turn {t}: what should I pack for Oslo in May?"}
                started = time.perf_counter()
                try:
                    async with http.stream("POST", f"{url}/v1/chat", json=body, headers=headers) as response:
                        raw = (await response.aread()).decode()
                    if response.status_code != 200 or "event: done" not in raw:
                        errors += 1
                        continue
                except httpx2.HTTPError:
                    errors += 1
                    continue
                latencies.append(time.perf_counter() - started)
                foreign += bool(set(MARKER.findall(raw)) - {f"<U{u}>"})

        started = time.perf_counter()
        await asyncio.gather(*(one(u) for u in range(len(secrets))))
        elapsed = time.perf_counter() - started
        missing = 0
        for u, secret in enumerate(secrets):  # read every chat back, from the first server
            view = await http.get(
                f"{urls[0]}/v1/chats/{chat}",
                params={"last": 1000},
                headers={"Authorization": f"Bearer {secret}"},
            )
            turns_back = view.json()["turns"] if view.status_code == 200 else []
            missing += max(2 * turns - len(turns_back), 0)
            foreign += sum(bool(set(MARKER.findall(t["content"])) - {f"<U{u}>"}) for t in turns_back)
    latencies.sort()
    return {
        "turns_per_s": len(latencies) / elapsed,
        "p50_ms": statistics.median(latencies) * 1000 if latencies else 0.0,
        "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000 if latencies else 0.0,
        "errors": errors,
        "cross_tenant": foreign,
        "missing": missing,
    }


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

    stdio = StdioServerParameters(command=BRAIN, args=["mcp", "--user", "user-0"], env=env)
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


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=500)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--mcp-calls", type=int, default=200)
    options = parser.parse_args()
    with local_redis() as (redis_url, described):
        port = free_port()
        env = {
            **os.environ,
            "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
            "OPENAI_API_KEY": "sk-bench",
            "BRAIN_REDIS_URL": redis_url,
            "BRAIN_CONFIG": "/dev/null",
            "BRAIN_LOCAL_EMBEDDER": "off",  # the service alone: no embedded embedder even when installed
        }
        with process([sys.executable, "-c", MODEL, str(port)], env):
            client = TranslatingRedis.from_url(redis_url)
            keys = RedisApiKeyStore(client)
            secrets = [(await keys.create(f"user-{u}"))[1] for u in range(options.clients)]
            await client.aclose()
            async with servers(1, env) as urls:
                one = await load(urls, secrets, options.turns, "one")
                stdio_p50, http_p50, raw_p50 = await mcp_round_trips(
                    urls[0], secrets[0], env, options.mcp_calls
                )
            async with servers(2, env) as urls:
                two = await load(urls, secrets, options.turns, "two")
    turns = options.clients * options.turns
    shape = f"{options.clients} clients x {options.turns} turns"
    print(f"redis: {described}; model: loopback, zero latency; {shape}")
    print(
        f"{'servers':>8} {'turns/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7} {'cross':>6} {'missing':>8}"
    )
    for n, r in ((1, one), (2, two)):
        print(
            f"{n:>8} {r['turns_per_s']:>9.0f} {r['p50_ms']:>8.1f} {r['p99_ms']:>8.1f} "
            f"{r['errors']:>7.0f} {r['cross_tenant']:>6.0f} {r['missing']:>8.0f}"
        )
    print(
        f"MCP search_memories round trip p50: stdio {stdio_p50:.2f} ms, HTTP {http_p50:.2f} ms "
        f"(SDK client), {raw_p50:.2f} ms (one plain JSON-RPC POST)"
    )
    print(
        json.dumps(
            {
                "clients": options.clients,
                "turns": turns,
                "turns_per_s": round(one["turns_per_s"]),
                "p50_ms": round(one["p50_ms"], 1),
                "p99_ms": round(one["p99_ms"], 1),
                "errors": int(one["errors"] + one["missing"]),
                "cross_tenant": int(one["cross_tenant"] + two["cross_tenant"]),
                "two_process_errors": int(two["errors"] + two["missing"]),
                "two_process_turns_per_s": round(two["turns_per_s"]),
                "mcp_stdio_p50_ms": round(stdio_p50, 2),
                "mcp_http_p50_ms": round(http_p50, 2),
                "mcp_http_raw_p50_ms": round(raw_p50, 2),
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
