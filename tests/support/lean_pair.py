"""Two servers of one app on one Redis, for probing the lean `POST /v1/chat` (`roles.http.chat_stream`)
as a hostile client would: `lean` is the app as built (the lean route served ahead of the middleware stack,
`roles.http.front`), `plain` the same app without the lean route (the FastAPI route alone, through the whole
stack). Requests go over raw sockets (`request`, `exchange`), answers are compared parsed (`parsed`, `both`:
the same request to both, each with its own key), and `state` is what Redis holds besides keys and rate
counters."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import pytest
import redis.asyncio as aioredis

from brain.backends.redis import RedisBackend
from brain.backends.redis.api_keys import RedisApiKeyStore
from brain.backends.redis.client import TranslatingRedis
from brain.runtime import local_runtime
from roles.http import chat_stream, create_app
from roles.http.chat_stream import LeanChat
from tests.roles.service.conftest import settings_for
from tests.support.serving import assistant_of, serving

__all__ = [
    "LIMIT",
    "Answer",
    "Pair",
    "both",
    "connect",
    "exchange",
    "parsed",
    "request",
    "serve_pair",
    "state",
]

LIMIT = 4_096  # serve.max_body_bytes of these servers


@dataclass
class Pair:
    """One runtime on one Redis served twice: `lean` as `brain serve` does, `plain` without the lean route."""

    lean: str
    plain: str
    redis: aioredis.Redis
    keys: RedisApiKeyStore
    served: list[int]  # requests the lean route answered itself
    ids: dict[str, str] = field(default_factory=dict)  # key id by secret

    async def key(self, user: str) -> str:
        key, secret = await self.keys.create(user)
        self.ids[secret] = key.id
        return secret

    async def charged(self, secret: str) -> int:
        """The requests counted against the key of `secret` (every rate window)."""
        counts = [
            int(await self.redis.get(n))
            async for n in self.redis.scan_iter(f"svc:{{rate.{self.ids[secret]}}}:*")
        ]
        return sum(counts)


@contextlib.asynccontextmanager
async def serve_pair(
    redis_url: str,
    llm: Any,
    monkeypatch: pytest.MonkeyPatch,
    *,
    model: dict[str, Any] | None = None,
    root_path: str = "",
    **serve: Any,
) -> AsyncIterator[Pair]:
    settings = settings_for(model, **{"max_body_bytes": LIMIT, **serve})
    client = TranslatingRedis.from_url(redis_url)
    await client.flushdb()
    runtime = local_runtime(llm, settings=settings, backend=RedisBackend.for_settings(client, settings))
    lean_app = create_app(settings, assistant_of(runtime))
    plain_app = create_app(settings, assistant_of(runtime))
    plain_app.router.routes[:] = [r for r in plain_app.router.routes if not isinstance(r, LeanChat)]
    plain_app.lean = None  # nor ahead of the stack
    served: list[int] = []
    original = chat_stream._stream

    async def counted(*args: Any) -> None:
        served.append(1)
        await original(*args)

    monkeypatch.setattr(chat_stream, "_stream", counted)
    async with (
        serving(lean_app, settings.serve, root_path=root_path) as lean,
        serving(plain_app, settings.serve, root_path=root_path) as plain,
    ):
        yield Pair(lean, plain, client, RedisApiKeyStore(client, prefix="svc"), served)
    await client.aclose()


async def connect(url: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    return await asyncio.open_connection(parts.hostname, parts.port)


def request(
    body: bytes | str | Any,
    secret: str | None,
    headers: list[tuple[str, str]] | None = None,
    *,
    method: str = "POST",
    target: str = "/v1/chat",
) -> bytes:
    """A whole HTTP/1.1 request, `Connection: close`; `body` as given (bytes, str) or as JSON."""
    raw = body if isinstance(body, bytes) else (body if isinstance(body, str) else json.dumps(body)).encode()
    lines = [f"{method} {target} HTTP/1.1", "Host: brain", "Connection: close"]
    if secret is not None:
        lines.append(f"Authorization: Bearer {secret}")
    given = headers if headers is not None else [("Content-Type", "application/json")]
    lines += [f"{name}: {value}" for name, value in given]
    if not any(name.lower() in ("content-length", "transfer-encoding") for name, _ in given):
        lines.append(f"Content-Length: {len(raw)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + raw


async def exchange(url: str, raw: bytes) -> bytes:
    """Send `raw`, read the answer to the end (the server closes)."""
    reader, writer = await connect(url)
    writer.write(raw)
    await writer.drain()
    try:
        return await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()


@dataclass(frozen=True)
class Answer:
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def parsed(raw: bytes) -> Answer:
    """An answer without its `date` and with any request id masked; a chunked body joined."""
    while raw.startswith(b"HTTP/1.1 100 "):  # an interim 100 Continue
        raw = raw.partition(b"\r\n\r\n")[2]
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = tuple(
        (name.lower(), value.strip())
        for name, _, value in (line.partition(":") for line in lines[1:])
        if name.lower() != "date"
    )
    if ("transfer-encoding", "chunked") in headers:
        joined, rest = b"", body
        while rest:
            size, _, rest = rest.partition(b"\r\n")
            n = int(size, 16)
            if n == 0:
                break
            joined, rest = joined + rest[:n], rest[n + 2 :]
        body = joined
    body = re.sub(rb"[0-9a-f]{16}", b"<id>", body)
    if ("transfer-encoding", "chunked") not in headers:
        headers = tuple((k, str(len(body)) if k == "content-length" else v) for k, v in headers)
    return Answer(status, headers, body)


async def both(pair: Pair, raw_for: Any) -> tuple[Answer, Answer]:
    """The same hostile request to the lean server and to the plain one (each with its own new key,
    counted alike)."""
    ann, bob = await pair.key("ann"), await pair.key("bob")
    lean = parsed(await exchange(pair.lean, raw_for(ann)))
    plain = parsed(await exchange(pair.plain, raw_for(bob)))
    assert await pair.charged(ann) == await pair.charged(bob)
    return lean, plain


async def state(redis: aioredis.Redis) -> dict[bytes, Any]:
    """Every key of the store but the API keys' and their rate counts, and its value."""
    found: dict[bytes, Any] = {}
    async for name in redis.scan_iter(count=1_000):
        if b"{apikeys}" in name or b"{rate." in name:
            continue
        found[name] = await redis.dump(name)
    return found
