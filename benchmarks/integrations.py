"""The agent-framework adapters (roles/integrations) through one 50-turn scripted conversation each, on a
private local Redis: per turn, the adapter's calls (write the turn, read history or search) against the
same work done on brain's own API in the same run; then a check that everything written comes back.
A framework that is not installed is reported as skipped (its `*_ok` is null).

Then the rest of "where users already are" (`benchmarks/common/service_checks.py`), against two apps served
in-process on the same Redis: `client_routes_covered` of `client_routes_total` (the API's operations that
`brain.client` has a method for), `mcp_protocol_version` (negotiated by the `mcp` SDK's client),
`mcp_stateless_ok` (a tool call sent to the second app, with no session, lands), `docs_offline_ok`,
`openapi_security_ok`, and `wheel_installs_ok` (`.ci/wheel_check.py`; null with `--skip-wheel`).

    python benchmarks/integrations.py [--skip-wheel]

Prints two tables, then one JSON line: those keys, `agents_session_ok`, `langgraph_store_ok`,
`llamaindex_memory_ok`, `adk_memory_ok`, `adapter_overhead_ms_p50` (adapter minus own API, per turn, all
adapters pooled) and per adapter."""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import logging
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import service_checks as checks
from benchmarks.common.servers import local_redis
from brain import BrainMemory, Message, Settings, local_runtime
from brain.backends.redis import RedisBackend
from brain.backends.redis.client import TranslatingRedis
from brain.runtime import Runtime
from brain.search.index import IndexedDoc
from brain.testing import ScriptedLLM

TURNS = 50
Step = Callable[[int], Awaitable[None]]


def turn(i: int) -> tuple[str, str]:
    """The scripted conversation: the user's line and the model's scripted answer of turn `i`."""
    return f"note {i}: the word marker{i} goes with colour c{i % 7}", f"Noted marker{i}."


async def _timed(step: Step, i: int) -> float:
    start = time.perf_counter()
    await step(i)
    return (time.perf_counter() - start) * 1000


async def _run(adapter: Step, own: Step) -> tuple[list[float], list[float]]:
    a, o = [], []
    for i in range(TURNS):
        a.append(await _timed(adapter, i))
        o.append(await _timed(own, i))
    return a, o


async def _own_chat(rt: Runtime, chat: str, i: int) -> None:
    memory = await BrainMemory.loads(
        rt.store, "own", chat, settings=rt.settings.memory, tokenizer=rt.tokenizer
    )
    user, answer = turn(i)
    memory.add_history(Message(role="user", content=user))
    memory.add_history(Message(role="assistant", content=answer))
    await memory.dumps()
    await memory.last_turns(4)


async def agents_case(rt: Runtime) -> tuple[bool, list[float], list[float]]:
    from roles.integrations.openai_agents import BrainSession

    session = BrainSession(rt, "u", "agents")
    sent: list[Any] = []

    async def adapter(i: int) -> None:
        user, answer = turn(i)
        items: list[Any] = [
            {"role": "user", "content": user},
            {"type": "function_call", "call_id": f"c{i}", "name": "lookup", "arguments": "{}"},
            {"type": "function_call_output", "call_id": f"c{i}", "output": answer},
        ]
        sent.extend(items)
        await session.add_items(items)
        await session.get_items(limit=4)

    a, o = await _run(adapter, lambda i: _own_chat(rt, "own-agents", i))
    ok = await session.get_items() == sent and await session.pop_item() == sent[-1]
    return ok, a, o


async def langgraph_case(rt: Runtime) -> tuple[bool, list[float], list[float]]:
    from roles.integrations.langgraph_store import BrainStore

    store = BrainStore(rt, "bench")
    assert rt.tiers is not None
    own = rt.tiers.archival("own-langgraph")

    async def adapter(i: int) -> None:
        await store.aput(("u", "notes"), f"k{i}", {"text": turn(i)[0]})
        await store.asearch(("u",), query=f"marker{i}", limit=3)

    async def ours(i: int) -> None:
        await own.add(IndexedDoc(id=f"k{i}", text=turn(i)[0]))
        await own.search(f"marker{i}", limit=3)

    a, o = await _run(adapter, ours)
    hits = await store.asearch(("u",), query="marker17", limit=3)
    item = await store.aget(("u", "notes"), "k49")
    ok = bool(hits) and hits[0].key == "k17" and item is not None and item.value == {"text": turn(49)[0]}
    return ok, a, o


async def llamaindex_case(rt: Runtime) -> tuple[bool, list[float], list[float]]:
    from llama_index.core.base.llms.types import ChatMessage

    from roles.integrations.llamaindex_memory import BrainChatMemory

    memory = BrainChatMemory(runtime=rt, user_id="u", chat_id="llama", token_limit=200)
    sent: list[ChatMessage] = []

    async def adapter(i: int) -> None:
        user, answer = turn(i)
        messages = [ChatMessage(role="user", content=user), ChatMessage(role="assistant", content=answer)]
        sent.extend(messages)
        await memory.aput_messages(messages)
        await memory.aget()

    a, o = await _run(adapter, lambda i: _own_chat(rt, "own-llama", i))
    recent = await memory.aget()
    ok = await memory.aget_all() == sent and 0 < len(recent) < len(sent) and recent == sent[-len(recent) :]
    return ok, a, o


async def adk_case(rt: Runtime) -> tuple[bool, list[float], list[float]]:
    from google.adk.events.event import Event
    from google.genai import types

    from roles.integrations.adk_memory import BrainMemoryService
    from roles.integrations.memory_search import search_archival

    service = BrainMemoryService(rt)
    assert rt.tiers is not None
    tiers = rt.tiers

    async def adapter(i: int) -> None:
        content = types.Content(role="user", parts=[types.Part(text=turn(i)[0])])
        event = Event(id=f"e{i}", invocation_id="b", author="user", content=content)
        await service.add_events_to_memory(app_name="bench", user_id="u", events=[event])
        await service.search_memory(app_name="bench", user_id="u", query=f"marker{i}")

    async def ours(i: int) -> None:
        await tiers.archival("own-adk").add(IndexedDoc(id=f"e{i}", text=turn(i)[0]))
        await search_archival(tiers, "own-adk", f"marker{i}", 5)

    a, o = await _run(adapter, ours)
    found = await service.search_memory(app_name="bench", user_id="u", query="marker23")
    ok = bool(found.memories) and found.memories[0].id == "e23"
    return ok, a, o


CASES = {
    "agents_session": ("agents", agents_case),
    "langgraph_store": ("langgraph.store.base", langgraph_case),
    "llamaindex_memory": ("llama_index.core.memory", llamaindex_case),
    "adk_memory": ("google.adk.memory", adk_case),
}


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


async def service(url: str, skip_wheel: bool) -> dict[str, Any]:
    """The service checks, printed as a table; their figures."""
    async with checks.served_apps(url) as (urls, secret):
        async with httpx2.AsyncClient(base_url=urls[0], timeout=30) as http:
            covered, total = checks.client_routes((await http.get("/openapi.json")).json())
        version, stateless = await checks.mcp_checks(urls, secret)
        figures: dict[str, Any] = {
            "client_routes_covered": covered,
            "client_routes_total": total,
            "mcp_protocol_version": version,
            "mcp_stateless_ok": stateless,
            "docs_offline_ok": await checks.docs_offline(urls[0]),
            "openapi_security_ok": await checks.openapi_security(urls[0]),
        }
    figures["wheel_installs_ok"] = None if skip_wheel else await asyncio.to_thread(checks.wheel_installs)
    print(f"\n{'check':<24}{'result':>14}")
    for name, value in figures.items():
        print(f"{name:<24}{'skipped' if value is None else str(value):>14}")
    return figures


async def main(skip_wheel: bool) -> None:
    result: dict[str, Any] = {"turns": TURNS}
    pooled: list[float] = []
    print(f"{'adapter':<20}{'ok':>6}{'adapter p50 ms':>16}{'own API p50 ms':>16}{'overhead p50 ms':>17}")
    with local_redis() as (url, server):
        client = TranslatingRedis.from_url(url)
        settings = Settings.model_validate({"redis": {"key_prefix": "bench"}})
        rt = local_runtime(
            ScriptedLLM(), settings=settings, backend=RedisBackend.for_settings(client, settings)
        )
        try:
            for name, (module, case) in CASES.items():
                if not _installed(module):
                    result[f"{name}_ok"] = None
                    print(f"{name:<20}{'skip':>6}   ({module} not installed)")
                    continue
                ok, a, o = await case(rt)
                diffs = [x - y for x, y in zip(a, o, strict=True)]
                pooled += diffs
                result[f"{name}_ok"] = ok
                result[f"{name}_overhead_ms_p50"] = round(statistics.median(diffs), 3)
                print(
                    f"{name:<20}{ok!s:>6}{statistics.median(a):>16.3f}{statistics.median(o):>16.3f}"
                    f"{statistics.median(diffs):>17.3f}"
                )
        finally:
            await client.aclose()
        result |= await service(url, skip_wheel)
        result["server"] = server
    result["adapter_overhead_ms_p50"] = round(statistics.median(pooled), 3) if pooled else None
    print(json.dumps(result))


if __name__ == "__main__":
    logging.disable(logging.INFO)  # the served apps' request logs
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-wheel", action="store_true", help="skip .ci/wheel_check.py (minutes)")
    asyncio.run(main(parser.parse_args().skip_wheel))
