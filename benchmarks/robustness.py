"""A service that holds up on an open network (issue 22), end to end: real `brain serve` processes, a real
Redis (`benchmarks/common/redis_process.py`: stopped and started again mid-run) and a loopback model
(`benchmarks/common/hostile_model.py`) that hangs, dribbles, fences or garbles on demand and records every
request it gets.

1. Latency: a small keep-alive request (one persistent client, `GET /healthz`); an MCP tool call
   (`list_memories`) with the MCP SDK's streamable-HTTP client against the same JSON-RPC `tools/call` as one
   raw POST (after initialization).
2. Bad input: every `/v1` route of the server's OpenAPI document (and MCP `tools/call`) is sent a lone
   surrogate (the JSON escape `\\ud800`; `%ED%A0%80` in a path or query) and invalid UTF-8 (`\\xff\\xfe`;
   `%FF%FE`) in each id, query parameter and body field, then wrong types, unknown fields and broken JSON;
   each request carries a marker word of its own. Counted: 5xx answers to bad text, error bodies holding
   the marker they were sent.
3. Ids: chats with tricky ids created over HTTP (`POST /v1/chat`) and MCP (`converse`); an id accepted at
   creation but not listed, or not readable / exportable / erasable by its percent-encoded path, is
   unreachable. User ids through `brain keys create --user`.
4. Oversize: a 1 MiB message and one just beyond `llm.context_window` (set to 8,192) to `POST /v1/chat`;
   counted: model requests carrying either (by marker, until the end of the run).
5. At once (two servers): slowloris connections dribbling headers (and a few dribbling a body) at one
   server while normal requests are made; chat turns while the model hangs (plain and SSE), stalls
   mid-stream, or dribbles and ends (not to be cut); the user's message kept, no half-written answer; a
   fact extraction answered inside a ```json fence; one answered with garbage (LLM calls counted for that
   one turn, and its dead letter looked for in `brain worker status`).
6. Redis killed: 5xx bodies naming the Redis host or port, a key name or a traceback; `/readyz` while down
   and after Redis is back on the same port and data; `brain serve` started while Redis is down.
7. Failed authentication: 100 requests with bad keys from one client; whether a 429 came.

Settings that may not exist yet (deadlines, attempts) are set only when `brain.settings` has them. Prints a
table, then one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import resource
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx2
import yaml
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import LATEST_PROTOCOL_VERSION

from benchmarks.common.serve_load import process, ready, servers
from benchmarks.serve import ROOT, brain_command, free_port, revision_command
from benchmarks.trust import Api, Route, Stored, World, keyspace, routes
from brain.llm.tokens import Tokenizer
from brain.settings import FactSettings, LLMSettings, ServeSettings
from tests.support.servers import RedisServerProcess, valkey_binary

MODEL = Path(__file__).resolve().parent / "common" / "hostile_model.py"
# the deadlines and tries measured are the defaults a user gets
FIRST_BYTE = float(LLMSettings.model_fields["first_token_timeout"].default)
BETWEEN_CHUNKS = float(LLMSettings.model_fields["chunk_timeout"].default)
ATTEMPTS = int(FactSettings.model_fields["max_attempts"].default)
HEADER = float(ServeSettings.model_fields["header_timeout"].default)
BODY = float(ServeSettings.model_fields["body_timeout"].default)
CONTEXT_WINDOW = 8_192
MIB = 1_048_576
SURROGATE_PATH = "%ED%A0%80"  # U+D800 as UTF-8 would spell it: what a client sends for a lone surrogate
BAD_UTF8_PATH = "%FF%FE"
LEAKS = ("127.0.0.1", "localhost", "redis://", "Traceback", 'File "', "brain:")
TRICKY_IDS = (
    "a/b",
    "/leading-slash",
    "with space",
    " padded ",
    "%2F",
    "100%",
    "a%zz",
    ".",
    "..",
    "a?b=c",
    "a#frag",
    "back\\slash",
    "a:b",
    "{tag}",
    "*",
    "x" * 256,
    "y" * 1_000,
    "中文聊天",
    "emoji 🧠✨",
    "ünïcödé",
    "e\u0301 combining",
    "zero\u200bwidth",
    "مرحبا",
    "line\u2028sep",
    "tab\tid",
    "nul\x00id",
    "",
)
TRICKY_USERS = ("", "   ", "a/b", "a:b", "z" * 300)


# ---------------------------------------------------------------------------------------------- plumbing


def config() -> dict[str, Any]:
    """The run's settings: a small context window and a fact worker that tries again soon; every deadline
    and the fact extraction tries at the defaults a user gets."""
    facts: dict[str, Any] = {"idle_seconds": 0.2, "reclaim_seconds": 2.0, "in_process_worker": True}
    return {
        "llm": {"context_window": CONTEXT_WINDOW},
        "memory": {"mode": "brain", "facts": facts},
        "serve": {"rate_limit": 0},
    }


def p50_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000 if samples else float("nan")


def leaks(text: str, port: int) -> list[str]:
    return [m for m in (*LEAKS, f":{port}", str(port)) if m in text]


class Rig:
    """One run: the restartable Redis, the model, the record of its requests, two servers' settings."""

    def __init__(
        self, redis: RedisServerProcess, model_url: str, record: Path, env: dict[str, str], tmp: Path
    ) -> None:
        self.redis, self.tmp = redis, tmp
        self.world = World(redis.url, model_url, record, env, tmp)
        self.config = tmp / "config.yaml"
        self.config.write_text(yaml.safe_dump(config()), encoding="utf-8")
        self.env = {**env, "BRAIN_CONFIG": str(self.config)}

    def requests(self) -> list[dict[str, Any]]:
        return self.world.requests()

    def calls(self, marker: str, kinds: tuple[str, ...] = ()) -> list[dict[str, Any]]:
        """The model requests whose body held `marker` (of `kinds`, when given)."""
        return [r for r in self.requests() if marker in r["markers"] and (not kinds or r["kind"] in kinds)]

    async def key(self, user: str) -> str:
        return await self.world.key(user)

    async def cli(
        self, *args: str, limit: float = 40.0, env: dict[str, str] | None = None
    ) -> tuple[int, str]:
        """`brain ARGS`: exit status (-1: killed after `limit` seconds) and its stdout and stderr."""
        child = await asyncio.create_subprocess_exec(
            *brain_command(ROOT),
            *args,
            env=env or self.env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            out, _ = await asyncio.wait_for(child.communicate(), limit)
        except TimeoutError:
            child.kill()
            out, _ = await child.communicate()
            return -1, out.decode(errors="replace")
        return child.returncode or 0, out.decode(errors="replace")


@contextlib.asynccontextmanager
async def rig() -> AsyncIterator[Rig]:
    with tempfile.TemporaryDirectory(prefix="brain-robust-") as tmp:
        # a Redis it can kill and start again on the same port with its data (fsync always)
        redis = RedisServerProcess(
            Path(tmp) / "redis", binary=shutil.which("redis-server") or valkey_binary()
        )
        redis.start()
        try:
            async with _rig(redis, Path(tmp)) as made:
                yield made
        finally:
            redis.stop()


@contextlib.asynccontextmanager
async def _rig(redis: RedisServerProcess, tmp: Path) -> AsyncIterator[Rig]:
    record, port = tmp / "requests.jsonl", free_port()
    record.touch()
    env = {
        **os.environ,
        "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "OPENAI_API_KEY": "sk-bench",
        "BRAIN_REDIS_URL": redis.url,
        "BRAIN_LOCAL_EMBEDDER": "off",
        "BRAIN_HOME": str(tmp / "home"),
    }
    with process([sys.executable, str(MODEL), str(port), str(record)], env):
        model = f"http://127.0.0.1:{port}"
        await ready(model, "/state")
        yield Rig(redis, model, record, env, Path(tmp))


def found_in(stored: list[Stored], needle: str) -> list[str]:
    """Names of the keys with an item holding `needle`."""
    raw = needle.encode()
    return sorted({s.key.decode(errors="replace") for s in stored if any(raw in i for i in s.items)})


# ---------------------------------------------------------------------------------------------- 1. latency


@dataclass
class Latency:
    keepalive_ms: float = 0.0
    keepalive_p99_ms: float = 0.0
    mcp_sdk_ms: float = 0.0
    mcp_raw_ms: float = 0.0
    mcp_note: str = ""


MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def rpc(method: str, params: dict[str, Any], n: int | None = 1) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if n is not None:
        body["id"] = n
    return body


async def latency(url: str, secret: str, calls: int) -> Latency:
    result = Latency()
    async with httpx2.AsyncClient(timeout=10) as http:
        samples = []
        for i in range(calls + 20):
            started = time.perf_counter()
            assert (await http.get(f"{url}/healthz")).status_code == 200
            if i >= 20:
                samples.append(time.perf_counter() - started)
        samples.sort()
        result.keepalive_ms = p50_ms(samples)
        result.keepalive_p99_ms = samples[int(len(samples) * 0.99)] * 1000
    auth = {"Authorization": f"Bearer {secret}"}
    async with (
        httpx2.AsyncClient(headers=auth, timeout=30) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
    ):
        sdk = []
        for i in range(calls // 2 + 5):
            started = time.perf_counter()
            answer = await client.call_tool("list_memories", {})
            if i >= 5:
                sdk.append(time.perf_counter() - started)
            if answer.is_error:
                result.mcp_note = f"the SDK call failed: {str(answer.content)[:120]}"
        result.mcp_sdk_ms = p50_ms(sdk)
    async with httpx2.AsyncClient(headers={**auth, **MCP_HEADERS}, timeout=30) as http:
        init = rpc(
            "initialize",
            {
                "protocolVersion": LATEST_PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "robustness", "version": "0"},
            },
            0,
        )
        reply = await http.post(f"{url}/mcp", json=init)
        headers = dict(http.headers)
        with contextlib.suppress(ValueError, KeyError):
            version = reply.json()["result"]["protocolVersion"]
            headers["mcp-protocol-version"] = version
        if "mcp-session-id" in reply.headers:
            headers["mcp-session-id"] = reply.headers["mcp-session-id"]
        await http.post(f"{url}/mcp", json=rpc("notifications/initialized", {}, None), headers=headers)
        raw = []
        for i in range(calls // 2 + 5):
            started = time.perf_counter()
            answer_raw = await http.post(
                f"{url}/mcp",
                json=rpc("tools/call", {"name": "list_memories", "arguments": {}}, i + 1),
                headers=headers,
            )
            if i >= 5:
                raw.append(time.perf_counter() - started)
            if answer_raw.status_code != 200 or '"isError":true' in answer_raw.text.replace(" ", ""):
                result.mcp_note = f"a raw call failed: {answer_raw.status_code} {answer_raw.text[:120]}"
        result.mcp_raw_ms = p50_ms(raw)
    return result


# ---------------------------------------------------------------------------------------------- 2. bad input


@dataclass
class Probe:
    route: str
    where: str
    kind: str  # surrogate | bad utf-8 | wrong type | unknown field | broken json | bad value
    marker: str
    status: int = 0
    echoed: bool = False
    note: str = ""

    @property
    def unicode(self) -> bool:
        return self.kind in ("surrogate", "bad utf-8")

    @property
    def failed(self) -> bool:
        """Bad text answered with a 5xx, or with no answer at all (the connection dropped)."""
        return self.unicode and (self.status >= 500 or self.status == 0)


class Prober:
    """Sends bad requests with a marker word of their own, and keeps what came back."""

    def __init__(self, http: httpx2.AsyncClient, url: str, secret: str) -> None:
        self.http, self.url, self.secret = http, url, secret
        self.probes: list[Probe] = []
        self.n = 0

    def marker(self) -> str:
        self.n += 1
        return f"zqecho{self.n}mark"

    async def send(
        self, probe: Probe, method: str, path: str, content: bytes | None = None, mcp: bool = False
    ) -> None:
        # a connection each: a 500 closes its connection, which would fail the next request sent on it
        headers = {"Authorization": f"Bearer {self.secret}", "Connection": "close"}
        if content is not None:
            headers |= MCP_HEADERS if mcp else {"Content-Type": "application/json"}
        try:
            response = await self.http.request(method, self.url + path, content=content, headers=headers)
            probe.status, text = response.status_code, response.text
        except httpx2.HTTPError as exc:
            probe.status, text = 0, ""
            probe.note = type(exc).__name__
        error = probe.status >= 400 or (
            mcp and ('"isError":true' in text.replace(" ", "") or '"error"' in text)
        )
        probe.echoed = error and probe.marker in text
        if probe.echoed or probe.status >= 500:
            probe.note = probe.note or text[:160].replace("\n", " ")
        self.probes.append(probe)


def leaves(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths to the string leaves of a JSON value."""
    if isinstance(value, str):
        return [at]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in leaves(v, (*at, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in leaves(v, (*at, i))]
    return []


def put(value: Any, at: tuple[Any, ...], leaf: Any) -> Any:
    """A copy of `value` with `leaf` at path `at`."""
    if not at:
        return leaf
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[at[0]] = put(value[at[0]], at[1:], leaf)
    return copy


def with_bad_text(body: Any, at: tuple[Any, ...], marker: str, kind: str) -> bytes:
    """`body` as JSON bytes with marker + a lone surrogate (as its JSON escape) or invalid UTF-8 at `at`."""
    if kind == "surrogate":
        return json.dumps(put(body, at, f"{marker} \ud800 end")).encode("ascii")
    return (
        json.dumps(put(body, at, "\x00HOLE\x00"))
        .encode()
        .replace(b"\\u0000HOLE\\u0000", marker.encode() + b" \xff\xfe end")
    )


async def bad_input(rig: Rig, url: str, http: httpx2.AsyncClient) -> Prober:
    user = f"probe-{uuid.uuid4().hex[:6]}"
    api = Api(http, url, await rig.key(user))
    await api.say("probe", "hello, I keep bees zqokmark")
    fact = await api.fact("I keep bees in Oslo")
    events = await api.get("/v1/history") or []
    event = next((e["id"] for e in events if e.get("fact_id") == fact), "0-0")
    export = await api.get("/v1/chats/probe/export") or {}
    table = routes((await http.get(f"{url}/openapi.json")).json())
    prober = Prober(http, url, api.headers["Authorization"].removeprefix("Bearer "))
    valid = {"chat_id": "probe", "memory_id": fact, "event_id": event}
    bases: dict[str, list[Any]] = {
        "ChatRequest": [{"chat_id": "probe", "text": "hello again", "stream": False}],
        "AddRequest": [
            {"text": "I like green tea", "chat_id": "probe-mem", "infer": False},
            {"messages": [{"role": "user", "content": "I like tea"}], "chat_id": "probe-mem", "infer": True},
        ],
        "ConversationExport": [export],
    }
    imports = 0
    for route in table:
        names = re.findall(r"\{([^}]+)\}", route.path)

        def path_with(bad: str | None = None, value: str = "", route: Route = route) -> str:
            nonlocal imports
            out: str = route.path
            for name in re.findall(r"\{([^}]+)\}", route.path):
                if name == bad:
                    filler = value
                elif route.method == "PUT" and name == "chat_id":
                    imports += 1
                    filler = f"import-{imports}"
                else:
                    filler = valid.get(name, "unknown")
                out = out.replace("{" + name + "}", filler)
            return out

        for name in names:
            for kind, spelled in (("surrogate", SURROGATE_PATH), ("bad utf-8", BAD_UTF8_PATH)):
                m = prober.marker()
                body = json.dumps(bases[route.body][0]).encode() if route.body in bases else None
                if route.body and body is None:
                    body = b"{}"
                await prober.send(
                    Probe(route.name, f"path {name}", kind, m),
                    route.method,
                    path_with(name, m + spelled),
                    body,
                )
        for param in route.query:
            for kind, spelled in (
                ("surrogate", SURROGATE_PATH),
                ("bad utf-8", BAD_UTF8_PATH),
                ("bad value", ""),
            ):
                m = prober.marker()
                query = f"?{param}={m}{spelled}"
                body = json.dumps(bases[route.body][0]).encode() if route.body in bases else None
                await prober.send(
                    Probe(route.name, f"query {param}", kind, m), route.method, path_with() + query, body
                )
        if not route.body:
            continue
        for base in bases.get(route.body, [{}]):
            for at in leaves(base)[:10]:
                for kind in ("surrogate", "bad utf-8"):
                    m = prober.marker()
                    where = "body " + ".".join(map(str, at))
                    content = with_bad_text(base, at, m, kind)
                    await prober.send(Probe(route.name, where, kind, m), route.method, path_with(), content)
            for name, value in base.items() if isinstance(base, dict) else []:
                m = prober.marker()
                wrong: Any = m if isinstance(value, list | bool | int) else [m]
                content = json.dumps({**base, name: wrong}).encode()
                await prober.send(
                    Probe(route.name, f"body {name}", "wrong type", m), route.method, path_with(), content
                )
            m = prober.marker()
            content = json.dumps({**base, "unexpected": m} if isinstance(base, dict) else base).encode()
            await prober.send(
                Probe(route.name, "body +unexpected", "unknown field", m), route.method, path_with(), content
            )
        m = prober.marker()
        await prober.send(
            Probe(route.name, "body", "broken json", m),
            route.method,
            path_with(),
            f'{{"text": "{m}", '.encode(),
        )
    await mcp_probes(prober, fact)
    return prober


async def mcp_probes(prober: Prober, fact: str) -> None:
    """The same bad text through MCP `tools/call` (one raw POST each), and unknown or mistyped arguments."""
    calls: list[tuple[str, str, dict[str, Any]]] = [
        ("search_memories", "query", {}),
        ("list_memories", "as_of", {}),
        ("add_memory", "text", {"infer": False}),
        ("converse", "text", {"chat_id": "mcp-probe"}),
        ("converse", "chat_id", {"text": "hello"}),
        ("memory_history", "memory_id", {}),
        ("delete_memory", "reason", {"memory_id": fact}),
    ]
    for n, (tool, argument, rest) in enumerate(calls):
        for kind in ("surrogate", "bad utf-8"):
            m = prober.marker()
            body = rpc("tools/call", {"name": tool, "arguments": {**rest, argument: "x"}}, n + 1)
            content = with_bad_text(body, ("params", "arguments", argument), m, kind)
            await prober.send(
                Probe(f"MCP {tool}", f"argument {argument}", kind, m), "POST", "/mcp", content, True
            )
    wrong: list[tuple[str, str, str, Any]] = [  # tool, argument, what is wrong, how the marker is sent
        ("list_memories", "unexpected", "unknown field", lambda m: m),
        ("search_memories", "limit", "wrong type", lambda m: m),
        ("memory_history", "memory_id", "wrong type", lambda m: [m]),
    ]
    for tool, argument, kind, value in wrong:
        m = prober.marker()
        arguments = {"query": "bees"} if tool == "search_memories" else {}
        body = rpc("tools/call", {"name": tool, "arguments": {**arguments, argument: value(m)}})
        shown = "+unexpected" if kind == "unknown field" else argument
        await prober.send(
            Probe(f"MCP {tool}", shown, kind, m), "POST", "/mcp", json.dumps(body).encode(), True
        )


# ---------------------------------------------------------------------------------------------- 3. ids


@dataclass
class IdResult:
    via: str
    chat_id: str
    created: int = 0
    accepted: bool = False
    failed: list[str] = field(default_factory=list)
    note: str = ""
    defaulted: bool = False  # accepted as "the default chat" (not a chat of that id)


def path_of(chat_id: str) -> str:
    """A chat id as one percent-encoded path segment (dot segments spelled `%2E`, or clients drop them)."""
    return chat_id.replace(".", "%2E") if set(chat_id) <= {"."} else quote(chat_id, safe="")


async def reach(http: httpx2.AsyncClient, url: str, headers: dict[str, str], result: IdResult) -> None:
    listed = await http.get(f"{url}/v1/chats", headers=headers)
    if result.chat_id not in [c.get("id") for c in (listed.json() if listed.status_code == 200 else [])]:
        result.failed.append("list")
    base = f"{url}/v1/chats/{path_of(result.chat_id)}"
    for name, method, where in (
        ("GET", "GET", base),
        ("export", "GET", base + "/export"),
        ("DELETE", "DELETE", base),
    ):
        response = await http.request(method, where, headers=headers)
        if response.status_code >= 300:
            result.failed.append(f"{name} {response.status_code}")


async def ids(
    rig: Rig, url: str, http: httpx2.AsyncClient
) -> tuple[list[IdResult], list[tuple[str, int, str]]]:
    results: list[IdResult] = []
    secret = await rig.key(f"ids-http-{uuid.uuid4().hex[:6]}")
    headers = {"Authorization": f"Bearer {secret}"}
    for chat_id in TRICKY_IDS:
        result = IdResult("HTTP", chat_id)
        body = {"chat_id": chat_id, "text": "hello from a tricky chat", "stream": False}
        response = await http.post(f"{url}/v1/chat", json=body, headers=headers)
        result.created, result.accepted = response.status_code, response.status_code < 300
        if result.accepted:
            await reach(http, url, headers, result)
        results.append(result)
    secret = await rig.key(f"ids-mcp-{uuid.uuid4().hex[:6]}")
    headers = {"Authorization": f"Bearer {secret}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as transport,
        Client(streamable_http_client(f"{url}/mcp", http_client=transport)) as client,
    ):
        for chat_id in TRICKY_IDS:
            result = IdResult("MCP", chat_id)
            try:
                answer = await client.call_tool(
                    "converse", {"text": "hello from a tricky chat", "chat_id": chat_id}
                )
                result.accepted = not answer.is_error
                result.note = "" if result.accepted else str(getattr(answer.content[0], "text", ""))[:80]
            except Exception as exc:  # the SDK raises on protocol errors
                result.note = f"{type(exc).__name__}: {str(exc)[:80]}"
            if result.accepted and not chat_id:  # `converse` takes an empty id for its default chat
                result.defaulted = True
            elif result.accepted:
                await reach(http, url, headers, result)
            results.append(result)
    users = await asyncio.gather(*(rig.cli("keys", "create", "--user", u, limit=60) for u in TRICKY_USERS))
    made = [
        (u, rc, out.strip().splitlines()[-1][:100] if out.strip() else "")
        for u, (rc, out) in zip(TRICKY_USERS, users, strict=True)
    ]
    return results, made


# ---------------------------------------------------------------------------------------------- 4. oversize


@dataclass
class Oversize:
    mib_status: int = 0
    mib_detail: str = ""
    window_status: int = 0
    window_detail: str = ""
    window_tokens: int = 0


def beyond_window(marker: str) -> tuple[str, int]:
    """A message just beyond `CONTEXT_WINDOW` tokens (counted as the server counts them), and its size."""
    tokenizer = Tokenizer.for_model(LLMSettings().model)
    words = [marker] + [f"w{i}" for i in range(CONTEXT_WINDOW)]  # more than enough: ~2 tokens each
    low, high = 1, len(words)
    while low < high:  # the fewest words over the window by 32 tokens
        middle = (low + high) // 2
        if tokenizer.count(" ".join(words[:middle])) >= CONTEXT_WINDOW + 32:
            high = middle
        else:
            low = middle + 1
    text = " ".join(words[:low])
    return text, tokenizer.count(text)


async def oversize(rig: Rig, url: str, http: httpx2.AsyncClient) -> Oversize:
    result = Oversize()
    api = Api(http, url, await rig.key(f"big-{uuid.uuid4().hex[:6]}"))
    head = "zqbigmibmark "
    text = head + "a" * (MIB - len(head))
    result.mib_status, detail = await api.call(
        "POST", "/v1/chat", body={"chat_id": "big", "text": text, "stream": False}
    )
    result.mib_detail = detail[:120]
    text, result.window_tokens = beyond_window("zqbigctxmark")
    result.window_status, detail = await api.call(
        "POST", "/v1/chat", body={"chat_id": "ctx", "text": text, "stream": False}
    )
    result.window_detail = detail[:120]
    return result


# ---------------------------------------------------------------------------------------------- 5. at once


@dataclass
class Slowloris:
    opened: int = 0
    open_after: int = 0
    closed_after: list[float] = field(default_factory=list)
    bodies_opened: int = 0
    bodies_open_after: int = 0
    bodies_closed_after: list[float] = field(default_factory=list)
    normal_ok: int = 0
    normal_sent: int = 0
    normal_ms: list[float] = field(default_factory=list)
    normal_errors: list[str] = field(default_factory=list)


async def slowloris(
    url: str, secret: str, connections: int, bodies: int, hold: float, normal: int
) -> Slowloris:
    """`connections` dribbling request headers and `bodies` dribbling a request body, a byte every 3 s,
    while `normal` requests are made on fresh connections; how many are still open `hold` seconds on."""
    result = Slowloris()
    host, port = url.removeprefix("http://").rsplit(":", 1)
    closed: dict[int, float] = {}
    started = time.monotonic()
    heads = {i: b"GET /healthz HTTP/1.1\r\nHost: %b\r\n" % host.encode() for i in range(connections)} | {
        i: b"POST /v1/memories HTTP/1.1\r\nHost: %b\r\nAuthorization: Bearer %b\r\n"
        b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n" % (host.encode(), secret.encode())
        for i in range(connections, connections + bodies)
    }

    async def one(i: int) -> None:
        try:
            reader, writer = await asyncio.open_connection(host, int(port))
        except OSError:
            closed[i] = 0.0
            return
        writer.write(heads[i])
        trickle = b"X-Slowloris-%d: " % i + b"a" * 1_000 if i < connections else b'{"text": "' + b"a" * 1_000

        async def dribble() -> None:
            for byte in trickle:
                await asyncio.sleep(3.0)
                writer.write(bytes([byte]))
                await writer.drain()

        task = asyncio.create_task(dribble())
        try:
            while await reader.read(4_096):
                pass  # an answer (a 408, say) before the close
        except OSError:
            pass
        finally:
            closed[i] = time.monotonic() - started
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
            writer.close()

    tasks = [asyncio.create_task(one(i)) for i in heads]
    limits = httpx2.Limits(max_keepalive_connections=0)
    async with httpx2.AsyncClient(timeout=10, limits=limits) as http:
        await asyncio.sleep(1.0)
        gap = (hold - 3.0) / max(1, normal)
        for _ in range(normal):
            result.normal_sent += 1
            at = time.perf_counter()
            try:
                response = await http.get(f"{url}/v1/chats", headers={"Authorization": f"Bearer {secret}"})
                if response.status_code == 200:
                    result.normal_ok += 1
                    result.normal_ms.append((time.perf_counter() - at) * 1000)
                else:
                    result.normal_errors.append(str(response.status_code))
            except httpx2.HTTPError as exc:
                result.normal_errors.append(type(exc).__name__)
            await asyncio.sleep(max(0.0, gap - (time.perf_counter() - at)))
    await asyncio.sleep(max(0.0, hold - (time.monotonic() - started)))
    failed = {i for i, at in closed.items() if at == 0.0}
    result.opened = connections - len(failed & set(range(connections)))
    result.bodies_opened = bodies - len(failed - set(range(connections)))
    result.open_after = sum(1 for i in range(connections) if i not in closed)
    result.bodies_open_after = sum(1 for i in range(connections, connections + bodies) if i not in closed)
    result.closed_after = sorted(t for i, t in closed.items() if i < connections and i not in failed)
    result.bodies_closed_after = sorted(t for i, t in closed.items() if i >= connections and i not in failed)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return result


@dataclass
class Hung:
    form: str
    marker: str
    chat: str
    seconds: float = 0.0
    status: int | None = None  # None: no answer within the client's timeout
    events: list[str] = field(default_factory=list)
    error_event: str = ""
    detail: str = ""
    kept: bool = False
    kept_in: list[str] = field(default_factory=list)  # the keys holding the user's message
    half_written: bool = False
    model_calls: int = 0
    abandoned_after: list[float] = field(default_factory=list)  # the model call ended by the server, s


async def hung_turn(
    http: httpx2.AsyncClient, url: str, secret: str, hung: Hung, text: str, stream: bool, limit: float
) -> None:
    body = {"chat_id": hung.chat, "text": text, "stream": stream}
    started = time.perf_counter()

    async def go() -> None:
        async with http.stream(
            "POST", f"{url}/v1/chat", json=body, headers={"Authorization": f"Bearer {secret}"}
        ) as r:
            hung.status = r.status_code
            if r.status_code != 200 or not stream:
                hung.detail = (await r.aread()).decode(errors="replace")[:160]
                return
            event = ""
            async for line in r.aiter_lines():
                if line.startswith("event: "):
                    event = line.removeprefix("event: ")
                    hung.events.append(event)
                elif line.startswith("data: ") and event == "error":
                    hung.error_event = line.removeprefix("data: ")[:160]
                if event in ("error", "done") and line.startswith("data: "):
                    return

    try:
        await asyncio.wait_for(go(), limit)
    except TimeoutError:
        hung.detail = f"no answer within the client's {limit:.0f} s"
    except httpx2.HTTPError as exc:
        hung.detail = f"{type(exc).__name__}: {exc}"[:160]
    hung.seconds = time.perf_counter() - started


async def hangs(rig: Rig, url: str, http: httpx2.AsyncClient, limit: float) -> list[Hung]:
    secret = await rig.key(f"hang-{uuid.uuid4().hex[:6]}")
    turns = [
        (Hung("plain (stream: false), model hangs", "zqhung1mark", "hang-plain"), "zqhangmode", False),
        (Hung("SSE (stream: true), model hangs", "zqhung2mark", "hang-sse"), "zqhangmode", True),
        (Hung("SSE, model stalls after 3 pieces", "zqhung3mark", "hang-stall"), "zqstallmode", True),
        (
            Hung("SSE, model dribbles 3 pieces 1 s apart, then ends", "zqhung4mark", "slow"),
            "zqdribblemode",
            True,
        ),
    ]
    await asyncio.gather(
        *(
            hung_turn(http, url, secret, h, f"What should I pack for Oslo {h.marker} {mode}?", s, limit)
            for h, mode, s in turns
        )
    )
    await asyncio.sleep(1.0)
    stored = await keyspace(rig.redis.url)
    headers = {"Authorization": f"Bearer {secret}"}
    for h, _, _ in turns:
        h.kept_in = found_in(stored, h.marker)
        h.kept = bool(h.kept_in)
        view = await http.get(f"{url}/v1/chats/{h.chat}", headers=headers)
        answers = [
            t
            for t in (view.json().get("turns", []) if view.status_code == 200 else [])
            if t["role"] == "assistant"
        ]
        if h.chat != "slow":  # the slow answer is whole: it is stored
            h.half_written = bool(answers) or bool(found_in(stored, "zqpartialmark"))
        calls = rig.calls(h.marker, ("answer",))
        h.model_calls = len(calls)
        h.abandoned_after = [c["done"] - c["at"] for c in calls if c.get("disconnected") and "done" in c]
    return [h for h, _, _ in turns]


@dataclass
class Facts:
    fenced_stored: bool = False
    fenced_seconds: float = 0.0
    fenced_calls: int = 0
    garbled_calls: int = 0
    garbled_span: float = 0.0
    garbled_stored: bool = False
    dead_letter: str = ""
    dead_line: str = ""


async def facts(rig: Rig, url: str, http: httpx2.AsyncClient, wait: float) -> Facts:
    result = Facts()
    fence = Api(http, url, await rig.key(f"fence-{uuid.uuid4().hex[:6]}"))
    garbler = f"garble-{uuid.uuid4().hex[:6]}"
    garble = Api(http, url, await rig.key(garbler))
    started = time.monotonic()
    for api, text in (
        (fence, "I keep bees in Oslo zqfencemode zqfencedfactmark"),
        (garble, "I keep goats in Bergen zqgarblemode zqgarbledfactmark"),
    ):
        status, reply = await api.call("POST", "/v1/memories", body={"text": text, "chat_id": "facts"})
        if status >= 300:
            raise SystemExit(f"adding a memory failed: {status} {reply[:200]}")
    while time.monotonic() - started < wait:
        if not result.fenced_stored:
            listed = json.dumps(await fence.get("/v1/memories") or [])
            if "zqfencedfactmark" in listed:
                result.fenced_stored, result.fenced_seconds = True, time.monotonic() - started
        await asyncio.sleep(0.5)
    result.fenced_calls = len(rig.calls("zqfencedfactmark", ("extract",)))
    garbled = rig.calls("zqgarbledfactmark", ("extract",))
    result.garbled_calls = len(garbled)
    result.garbled_span = garbled[-1]["at"] - garbled[0]["at"] if len(garbled) > 1 else 0.0
    result.garbled_stored = "zqgarbledfactmark" in json.dumps(await garble.get("/v1/memories") or [])
    rc, shown = await rig.cli("worker", "status", limit=60)
    count = re.search(r"dead letters?:\s*(\d+)", shown, re.IGNORECASE)
    mine = [line for line in shown.splitlines() if garbler in line]
    if rc != 0:
        last = shown.strip().splitlines()[-1][:80] if shown.strip() else ""
        result.dead_letter = f"`brain worker status` failed (exit {rc}: {last})"
    elif mine:
        result.dead_letter = f"yes ({count.group(0) if count else '?'})"
        result.dead_line = mine[0][:300]
    else:
        result.dead_letter = f"none for this turn ({count.group(0) if count else 'no count shown'})"
    return result


# ---------------------------------------------------------------------------------------------- 6. redis down


@dataclass
class Outage:
    probes: list[tuple[str, int, float, list[str]]] = field(default_factory=list)  # name, status, s, leaks
    ready_down: int = 0
    ready_down_body: str = ""
    ready_again: float | None = None
    after: int = 0
    serve_rc: int = 0
    serve_lines: int = 0
    serve_first: str = ""


async def outage(rig: Rig, url: str, http: httpx2.AsyncClient, secret: str) -> Outage:
    result = Outage()
    headers = {"Authorization": f"Bearer {secret}"}
    rig.redis.kill()
    port = rig.redis.port
    mcp_call = json.dumps(rpc("tools/call", {"name": "list_memories", "arguments": {}})).encode()
    asks: list[tuple[str, str, str, Any, dict[str, str]]] = [
        ("GET /v1/me", "GET", "/v1/me", None, headers),
        ("GET /v1/chats", "GET", "/v1/chats", None, headers),
        ("GET /v1/chats/probe", "GET", "/v1/chats/probe", None, headers),
        ("GET /v1/memories", "GET", "/v1/memories", None, headers),
        ("GET /v1/memories/search", "GET", "/v1/memories/search?q=bees", None, headers),
        ("POST /v1/memories", "POST", "/v1/memories", {"text": "I like tea", "infer": False}, headers),
        ("POST /v1/chat", "POST", "/v1/chat", {"chat_id": "down", "text": "hello", "stream": False}, headers),
        ("POST /v1/chat (SSE)", "POST", "/v1/chat", {"chat_id": "down", "text": "hello"}, headers),
        ("GET /v1/usage", "GET", "/v1/usage", None, headers),
        ("bad key", "GET", "/v1/chats", None, {"Authorization": "Bearer nope"}),
        ("POST /mcp tools/call", "POST", "/mcp", mcp_call, {**headers, **MCP_HEADERS}),
        ("GET /readyz", "GET", "/readyz", None, {}),
    ]

    async def one(name: str, method: str, path: str, body: Any, hdrs: dict[str, str]) -> None:
        at = time.perf_counter()
        try:
            if isinstance(body, bytes):
                response = await http.request(method, url + path, content=body, headers=hdrs, timeout=40)
            else:
                response = await http.request(method, url + path, json=body, headers=hdrs, timeout=40)
            status, text = response.status_code, response.text
        except httpx2.HTTPError as exc:
            status, text = 0, type(exc).__name__
        found = leaks(text, port) if status >= 500 else []
        result.probes.append((name, status, time.perf_counter() - at, found))
        if name == "GET /readyz":
            result.ready_down, result.ready_down_body = status, text[:100]

    async def serve_down() -> None:
        env = {**rig.env, "BRAIN_REDIS_URL": rig.redis.url}
        rc, out = await rig.cli("serve", "--port", "0", limit=45, env=env)
        lines = [line for line in out.splitlines() if line.strip()]
        result.serve_rc, result.serve_lines = rc, len(lines)
        result.serve_first = lines[0][:110] if lines else ""

    await asyncio.gather(*(one(*ask) for ask in asks), serve_down())
    await asyncio.to_thread(rig.redis.start)
    back = time.perf_counter()
    while time.perf_counter() - back < 20:
        with contextlib.suppress(httpx2.HTTPError):
            if (await http.get(f"{url}/readyz", timeout=5)).status_code == 200:
                result.ready_again = time.perf_counter() - back
                break
        await asyncio.sleep(0.25)
    with contextlib.suppress(httpx2.HTTPError):
        result.after = (await http.get(f"{url}/v1/chats", headers=headers, timeout=10)).status_code
    return result


# ---------------------------------------------------------------------------------------------- 7. bad keys


async def bad_keys(url: str, http: httpx2.AsyncClient, n: int) -> tuple[bool, int | None, dict[int, int]]:
    statuses: dict[int, int] = {}
    first: int | None = None
    for i in range(n):
        status = (
            await http.get(f"{url}/v1/chats", headers={"Authorization": f"Bearer bad-key-{i}"})
        ).status_code
        statuses[status] = statuses.get(status, 0) + 1
        if status == 429 and first is None:
            first = i + 1
    return first is not None, first, statuses


# ---------------------------------------------------------------------------------------------- report


def row(label: str, value: Any, target: str = "", ok: bool | None = None) -> None:
    mark = "" if ok is None else ("  ok" if ok else "  MISS")
    print(f"  {label:<58} {value!s:<24} {target}{mark}")


async def timed(name: str, work: Awaitable[Any], clock: dict[str, float]) -> Any:
    started = time.perf_counter()
    try:
        return await work
    finally:
        clock[name] = time.perf_counter() - started


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--slowloris", type=int, default=200, help="slowloris connections")
    parser.add_argument("--slow-bodies", type=int, default=20, help="connections dribbling a body")
    parser.add_argument("--normal", type=int, default=40, help="normal requests during the slowloris")
    parser.add_argument("--hold", type=float, default=35.0, help="seconds the slowloris connections are held")
    parser.add_argument("--client-timeout", type=float, default=60.0, help="client bound on a hung chat turn")
    parser.add_argument("--garble-wait", type=float, default=60.0, help="seconds the garbled turn is watched")
    parser.add_argument("--calls", type=int, default=300, help="keep-alive samples (MCP: half as many)")
    options = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 4 * options.slowloris + 256:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4 * options.slowloris + 1_024), hard))
    started = time.perf_counter()
    clock: dict[str, float] = {}
    async with rig() as r:
        print(
            "robustness benchmark: real brain serve x2, redis-server (killed and restarted), "
            "a hostile loopback model"
        )
        print(f"redis: {Path(r.redis.binary).name} (appendonly); llm.context_window = {CONTEXT_WINDOW}")
        print(
            f"defaults: llm.first_token_timeout = {FIRST_BYTE:g} s; "
            f"llm.chunk_timeout = {BETWEEN_CHUNKS:g} s; memory.facts.max_attempts = {ATTEMPTS}; "
            f"serve.header_timeout = {HEADER:g} s; "
            f"serve.body_timeout = {BODY:g} s"
        )
        two = [revision_command(ROOT)] * 2
        async with servers(two, r.env) as ((url, url2), _), httpx2.AsyncClient(timeout=60) as http:
            secret = await r.key(f"latency-{uuid.uuid4().hex[:6]}")
            lat = await timed("latency", latency(url, secret, options.calls), clock)
            prober = await timed("bad input", bad_input(r, url, http), clock)
            chats, users = await timed("ids", ids(r, url, http), clock)
            big = await timed("oversize", oversize(r, url, http), clock)
            loris_secret = await r.key(f"loris-{uuid.uuid4().hex[:6]}")
            loris, hung, fact = await asyncio.gather(
                timed(
                    "slowloris",
                    slowloris(
                        url2,
                        loris_secret,
                        options.slowloris,
                        options.slow_bodies,
                        options.hold,
                        options.normal,
                    ),
                    clock,
                ),
                timed("hung model", hangs(r, url, http, options.client_timeout), clock),
                timed("facts", facts(r, url, http, options.garble_wait), clock),
            )
            down = await timed("redis down", outage(r, url, http, secret), clock)
            limited, first_429, statuses = await timed("bad keys", bad_keys(url, http, 100), clock)
        every = r.requests()
        oversize_calls = [q for q in every if {"zqbigmibmark", "zqbigctxmark"} & set(q["markers"])]
        largest = max((q["largest"] for q in every), default=0)

    print("\n1. latency (loopback)")
    row(
        "keep-alive GET /healthz p50 / p99",
        f"{lat.keepalive_ms:.2f} / {lat.keepalive_p99_ms:.2f} ms",
        "<= 2 ms",
        lat.keepalive_ms <= 2,
    )
    row("MCP list_memories p50: SDK streamable-HTTP client", f"{lat.mcp_sdk_ms:.2f} ms")
    row(
        "MCP list_memories p50: one raw JSON-RPC POST",
        f"{lat.mcp_raw_ms:.2f} ms",
        "within 2 ms",
        abs(lat.mcp_sdk_ms - lat.mcp_raw_ms) <= 2,
    )
    if lat.mcp_note:
        print(f"    note: {lat.mcp_note}")

    probes = prober.probes
    unicode = [p for p in probes if p.unicode]
    by_status: dict[int, int] = {}
    for p in unicode:
        by_status[p.status] = by_status.get(p.status, 0) + 1
    echoes = [p for p in probes if p.echoed]
    print(
        f"\n2. bad input: {len(probes)} requests ({len(unicode)} with bad text) "
        f"over {len({p.route for p in probes})} routes"
    )
    row("answers to bad text, by status", " ".join(f"{s}:{n}" for s, n in sorted(by_status.items())))
    failed = [p for p in unicode if p.failed]
    row("5xx answers (or dropped connections) to bad text", len(failed), "0", not failed)
    row("error bodies echoing the request's marker", len(echoes), "0", not echoes)
    for p in failed[:12]:
        answer = "no answer" if p.status == 0 else p.status
        print(f"    5xx: {p.route} [{p.where}, {p.kind}] {answer} {p.note[:70]}")
    for p in echoes[:40]:
        print(f"    echo: {p.route} [{p.where}, {p.kind}] {p.status} {p.note[:70]}")
    if len(echoes) > 40:
        print(f"    ... {len(echoes) - 40} more echoes")

    accepted = [c for c in chats if c.accepted]
    lost = [c for c in accepted if c.failed]
    print(
        f"\n3. ids: {len(chats)} tricky chat ids tried "
        f"({len(TRICKY_IDS)} over HTTP, {len(TRICKY_IDS)} over MCP)"
    )
    row(
        "accepted at creation (HTTP / MCP)",
        f"{sum(c.via == 'HTTP' for c in accepted)} / {sum(c.via == 'MCP' for c in accepted)}",
    )
    row("accepted but unreachable afterwards", len(lost), "0", not lost)
    for c in lost:
        print(f"    unreachable ({c.via}): {c.chat_id[:40]!r}: {', '.join(c.failed)}")
    for c in (c for c in chats if c.defaulted):
        print(f"    {c.via} took the empty chat id {c.chat_id!r} as its default chat (not refused)")
    refused = [c for c in chats if not c.accepted and not c.defaulted]
    print(
        "    refused at creation: " + ", ".join(f"{c.via} {c.chat_id[:16]!r}" for c in refused)
        if refused
        else "    refused at creation: none"
    )
    print(
        "    brain keys create --user: "
        + ", ".join(f"{u[:12]!r} {'accepted' if rc == 0 else f'refused ({rc})'}" for u, rc, _ in users)
    )

    print(f"\n4. oversize (llm.context_window = {CONTEXT_WINDOW})")
    row("POST /v1/chat, a 1 MiB message: status", big.mib_status, "413", big.mib_status == 413)
    print(f"    {big.mib_detail}")
    row(
        f"POST /v1/chat, {big.window_tokens:,} tokens: status",
        big.window_status,
        "413",
        big.window_status == 413,
    )
    print(f"    {big.window_detail}")
    row("model requests carrying either", len(oversize_calls), "0", not oversize_calls)
    row("largest message any model request held (characters)", f"{largest:,}")

    print("\n5. at once: slowloris at server 2; hung model, fenced and garbled extraction at server 1")
    closed = loris.closed_after
    row(
        f"slowloris connections still open after {options.hold:.0f} s",
        f"{loris.open_after} of {loris.opened}",
        "0",
        loris.open_after == 0,
    )
    if closed:
        row("  dropped after (median / max)", f"{statistics.median(closed):.1f} / {max(closed):.1f} s")
    row(
        f"slow-body connections still open after {options.hold:.0f} s",
        f"{loris.bodies_open_after} of {loris.bodies_opened}",
        "0",
        loris.bodies_open_after == 0,
    )
    if loris.bodies_closed_after:
        dropped = loris.bodies_closed_after
        row("  dropped after (median / max)", f"{statistics.median(dropped):.1f} / {max(dropped):.1f} s")
    row(
        "normal requests ok meanwhile",
        f"{loris.normal_ok} of {loris.normal_sent}",
        f"{loris.normal_sent}",
        loris.normal_ok == loris.normal_sent,
    )
    row("  their p50 latency", f"{p50_ms([m / 1000 for m in loris.normal_ms]):.1f} ms")
    if loris.normal_errors:
        print(f"    failures: {', '.join(loris.normal_errors[:10])}")
    for h in hung:
        answer = "no answer" if h.status is None else str(h.status)
        if "hangs" in h.form:
            target = f"504 within {FIRST_BYTE:.0f} s"
            ok = h.status == 504 and h.seconds <= FIRST_BYTE + 3
        elif "stalls" in h.form:
            target = f"error event within {BETWEEN_CHUNKS:.0f} s"
            ok = "error" in h.events and h.seconds <= 3 * 1.0 + BETWEEN_CHUNKS + 3
        else:
            target, ok = "done event (not cut)", "done" in h.events
        row(f"{h.form}", f"{answer} after {h.seconds:.1f} s", target, ok)
        if h.events:
            print(
                f"    events: {' '.join(h.events[:6])}{' ...' if len(h.events) > 6 else ''} "
                f"{h.error_event[:80]}"
            )
        elif h.detail:
            print(f"    answer: {h.detail[:100]}")
        abandoned = ", ".join(f"{s:.1f}" for s in h.abandoned_after) or "none yet"
        print(
            f"    user's message kept: {'yes (' + ', '.join(h.kept_in)[:60] + ')' if h.kept else 'NO'}; "
            f"half-written answer stored: {'YES' if h.half_written else 'no'}; "
            f"model calls {h.model_calls}, abandoned by the server after (s): {abandoned}"
        )
    row("fact extraction in a ```json fence: fact stored", fact.fenced_stored, "true", fact.fenced_stored)
    if fact.fenced_stored:
        print(f"    after {fact.fenced_seconds:.1f} s, {fact.fenced_calls} extraction call(s)")
    row(
        f"garbled extraction: LLM calls for one turn in {options.garble_wait:.0f} s",
        fact.garbled_calls,
        f"<= {ATTEMPTS}",
        fact.garbled_calls <= ATTEMPTS,
    )
    print(
        f"    calls spread over {fact.garbled_span:.1f} s; fact stored anyway: {fact.garbled_stored}; "
        f"dead letter in `brain worker status`: {fact.dead_letter}"
    )
    if fact.dead_line:
        print(f"    {fact.dead_line}")

    print(f"\n6. redis killed (SIGKILL) mid-run, then started again on port {r.redis.port} with its data")
    leaked = [(n, s, found) for n, s, _, found in down.probes if found]
    fives = [p for p in down.probes if p[1] >= 500]
    for name, status, seconds, found in sorted(down.probes):
        print(
            f"    {name:<26} {status:>4} in {seconds:5.1f} s{'  leaks: ' + ', '.join(found) if found else ''}"
        )
    row("5xx bodies naming host/port, keys or a traceback", f"{len(leaked)} of {len(fives)}", "0", not leaked)
    row("/readyz while Redis is down", down.ready_down, "503", down.ready_down == 503)
    again = "never (20 s)" if down.ready_again is None else f"200 after {down.ready_again:.1f} s"
    row("/readyz after Redis is back", again, "200", down.ready_again is not None)
    row("GET /v1/chats after Redis is back", down.after, "200", down.after == 200)
    serve_rc = "still running (killed)" if down.serve_rc == -1 else f"exit {down.serve_rc}"
    row(
        "brain serve started while Redis is down",
        f"{serve_rc}, {down.serve_lines} line(s)",
        "exit 2, 1 line",
        down.serve_rc == 2 and down.serve_lines == 1,
    )
    print(f"    first line: {down.serve_first}")

    print("\n7. failed authentication")
    row("100 requests with bad keys: a 429 came", limited, "true", limited)
    print(f"    statuses: {statuses}; first 429 at request {first_429}")
    print(
        "\ntimes: "
        + ", ".join(f"{n} {s:.0f} s" for n, s in clock.items())
        + f"; total {time.perf_counter() - started:.0f} s"
    )
    plain = hung[0]
    print(
        json.dumps(
            {
                "slowloris_open_after_35s": loris.open_after,
                "normal_requests_ok_during_slowloris": loris.normal_ok,
                "hung_llm_seconds": round(plain.seconds, 1),
                "hung_llm_status": plain.status,
                "keepalive_p50_ms": round(lat.keepalive_ms, 2),
                "mcp_http_p50_ms": round(lat.mcp_sdk_ms, 2),
                "mcp_raw_p50_ms": round(lat.mcp_raw_ms, 2),
                "bad_unicode_5xx": len(failed),
                "error_echoes_input": len(echoes),
                "unreachable_ids": len(lost),
                "oversize_sent_to_llm": len(oversize_calls),
                "fenced_json_parsed": fact.fenced_stored,
                "llm_calls_for_unparseable_turn": fact.garbled_calls,
                "error_body_leaks": len(leaked),
                "unauth_rate_limited": limited,
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
