"""Checks of what the service offers users where they already are (issue 25), for
`benchmarks/integrations.py`: the Python client's coverage of the API, MCP's negotiated revision and
stateless serving across two apps, offline docs, the bearer scheme in the schema, the wheel as released.

Each returns plain figures; the apps are served in-process (uvicorn on loopback, as `brain serve`), on a
private Redis given by URL, with a scripted model."""

from __future__ import annotations

import contextlib
import inspect
import json
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from brain.backends.redis import RedisBackend
from brain.backends.redis.api_keys import RedisApiKeyStore
from brain.backends.redis.client import TranslatingRedis
from brain.client import AsyncBrainClient, BrainClient
from brain.client.call import ROUTES
from brain.runtime import local_runtime
from brain.settings import Settings
from brain.testing import ScriptedLLM
from roles.http import create_app
from roles.http.docs import SCHEME
from tests.support.serving import assistant_of, serving

__all__ = [
    "client_routes",
    "docs_offline",
    "mcp_checks",
    "openapi_security",
    "served_apps",
    "wheel_installs",
]

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = Settings.model_validate(
    {
        "redis": {"key_prefix": "bench25"},
        "memory": {"facts": {"in_process_worker": False}},
        "serve": {"rate_limit": 0, "auth_failure_limit": 0},
    }
)
_URL = re.compile(r"""(?:src|href|url)\s*[=:]\s*['"]([^'"]+)['"]""")


def _operations(schema: dict[str, Any]) -> set[tuple[str, str]]:
    return {(method.upper(), path) for path, ops in schema["paths"].items() for method in ops}


def client_routes(schema: dict[str, Any]) -> tuple[int, int]:
    """(covered, total): the schema's operations (every `/v1` route and `/healthz`, `/readyz`) against
    those `brain.client` has a builder for and a method of that name on both clients."""
    operations = _operations(schema)
    called = {
        op
        for name, op in ROUTES.items()
        if all(callable(getattr(c, name, None)) for c in (AsyncBrainClient, BrainClient))
        and inspect.iscoroutinefunction(getattr(AsyncBrainClient, name))
    }
    return len(operations & called), len(operations)


@contextlib.asynccontextmanager
async def served_apps(redis_url: str, n: int = 2) -> AsyncIterator[tuple[list[str], str]]:
    """`n` apps on one (emptied) Redis, each its own runtime as `n` `brain serve` processes would be:
    their base URLs and an API key of user ann."""
    client = TranslatingRedis.from_url(redis_url)
    await client.flushdb()
    secret = (await RedisApiKeyStore(client, prefix="bench25").create("ann"))[1]
    urls: list[str] = []
    try:
        async with contextlib.AsyncExitStack() as stack:
            for _ in range(n):
                backend = RedisBackend.for_settings(client, SETTINGS)
                runtime = local_runtime(ScriptedLLM(), settings=SETTINGS, backend=backend)
                app = create_app(SETTINGS, assistant_of(runtime))
                urls.append(await stack.enter_async_context(serving(app, SETTINGS.serve)))
            yield urls, secret
    finally:
        await client.aclose()


class _CallsToSecond(httpx2.AsyncBaseTransport):
    """A load balancer at its least kind: every request to the first app, but each tool call to the
    second; counts the tool calls the second answered (HTTP 200) and notes any session id handed out."""

    def __init__(self, second: int) -> None:
        self.second, self.landed, self.sessions = second, 0, set[str]()
        self.inner = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content) if request.content else {}
        moved = isinstance(body, dict) and body.get("method") == "tools/call"
        if moved:
            request.url = request.url.copy_with(port=self.second)
        response = await self.inner.handle_async_request(request)
        self.landed += moved and response.status_code == 200
        if "mcp-session-id" in response.headers:
            self.sessions.add(response.headers["mcp-session-id"])
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


async def mcp_checks(urls: list[str], secret: str) -> tuple[str, bool]:
    """(the revision the `mcp` SDK's client negotiates, stateless serving): in each of the SDK's modes
    (the newest revision, and the older handshake), a client that discovers the tools on the first app
    and whose tool calls all land on the second (which never saw it) stores a memory and finds it, and
    no server hands out a session id to stick to."""
    version, ok = "", True
    second = int(urls[1].rsplit(":", 1)[1])
    for mode in ("auto", "legacy"):
        balancer = _CallsToSecond(second)
        auth = {"Authorization": f"Bearer {secret}"}
        async with httpx2.AsyncClient(transport=balancer, headers=auth, timeout=30) as http:
            opened = Client(streamable_http_client(f"{urls[0]}/mcp", http_client=http), mode=mode)
            async with opened as client:
                version = version or str(client.protocol_version)
                text = f"Ann keeps bees ({mode})"
                added = await client.call_tool("add_memory", {"text": text, "infer": False})
                found = await client.call_tool("search_memories", {"query": f"bees {mode}"})
        hits = json.dumps(found.structured_content or {}) + "".join(
            getattr(c, "text", "") for c in found.content
        )
        ok = ok and not added.is_error and not found.is_error and text in hits
        ok = ok and balancer.landed == 2 and not balancer.sessions
    return version, ok


async def docs_offline(url: str) -> bool:
    """`/docs` and `/redoc` are served, every URL they name is the app's own (a path, no host) and is
    served by it, and their content security policy lets the pages' scripts reach only the app."""
    async with httpx2.AsyncClient(base_url=url, timeout=30) as http:
        for page in ("/docs", "/redoc"):
            answer = await http.get(page)
            named = _URL.findall(answer.text)
            if (
                answer.status_code != 200
                or not named
                or "default-src 'self'" not in answer.headers.get("content-security-policy", "")
            ):
                return False
            if any(not u.startswith("/") or u.startswith("//") for u in named):
                return False
            if re.search(r"(?:src|href)\s*=\s*['\"]https?:", answer.text):
                return False
            for path in named:
                if (await http.get(path)).status_code != 200:
                    return False
    return True


async def openapi_security(url: str) -> bool:
    """Every `/v1` operation of the served schema requires the bearer scheme (an HTTP bearer scheme) and
    is refused (401) without a key; the others (`/healthz`, `/readyz`) declare none and answer without."""
    async with httpx2.AsyncClient(base_url=url, timeout=30) as http:
        schema = (await http.get("/openapi.json")).json()
        if schema["components"]["securitySchemes"].get(SCHEME, {}).get("scheme") != "bearer":
            return False
        for method, path in sorted(_operations(schema)):
            operation = schema["paths"][path][method.lower()]
            concrete = re.sub(r"\{[^}]+\}", "x", path)
            status = (await http.request(method, concrete)).status_code
            if path.startswith("/v1/"):
                if operation.get("security") != [{SCHEME: []}] or status != 401:
                    return False
            elif "security" in operation or status == 401:
                return False
    return True


def wheel_installs(timeout: float = 900) -> bool:
    """`.ci/wheel_check.py`: the sdist and wheel built, twine-checked, installed with the README's first
    command in a fresh venv, and `brain chat` answering from it. Needs the package index."""
    try:
        done = subprocess.run(
            [sys.executable, str(ROOT / ".ci" / "wheel_check.py")],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        print("wheel check: timed out", file=sys.stderr)
        return False
    print(done.stdout.rstrip(), done.stderr.rstrip()[-2000:], sep="\n", file=sys.stderr)
    return done.returncode == 0
