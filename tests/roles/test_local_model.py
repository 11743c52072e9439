"""The embedded model and embedder for real (the `local` extra, no scripted model): chat streaming, tool calls
in tiered mode, fact and graph extraction as valid JSON, a summary. These check structure and plumbing, not
wisdom: the model is tiny."""

from __future__ import annotations

import asyncio
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import numpy as np
import pytest
from mcp import Client, StdioServerParameters

from actions.facts import extract_schema, parse_facts, render_extract
from actions.graph import RECORD_GRAPH
from actions.graph import render_extract as render_graph
from actions.memgpt import stream_step
from actions.summarize import summarize_text
from brain import Settings
from brain.errors import LLMError
from brain.llm.deferred import DeferredLLM
from brain.llm.local import LOCAL_EMBEDDER, LocalModel, local_model_for
from brain.llm.protocol import ChatMessage, Completion, ToolCallDelta
from brain.runtime import Runtime, open_runtime
from brain.settings import LocalSettings
from roles import Assistant
from roles.memory_tools import SPECS

pytestmark = pytest.mark.local_model

BRAIN = str(Path(sys.executable).parent / "brain")


def settings(tmp_path: Path, url: str, **memory: Any) -> Settings:
    return Settings.model_validate(
        {
            "home": str(tmp_path / "home"),
            "redis": {"url": url},
            "memory": memory,
            "local": {"parallel": 2, "context_window": 4096},
        }
    )


@pytest.fixture
async def runtime(tmp_path: Path, redis_server_url: str) -> AsyncIterator[Runtime]:
    async with open_runtime(settings(tmp_path, redis_server_url)) as opened:
        yield opened


async def test_the_embedded_model_and_embedder_stand_in_for_missing_endpoints(runtime: Runtime) -> None:
    assert runtime.local_model == "SmolLM2-135M-Instruct" and runtime.llm.model == runtime.local_model
    assert runtime.embedder == LOCAL_EMBEDDER
    assert runtime.tiers is not None and runtime.tiers.embed is not None
    tea, tea_zh, car = np.array(
        await runtime.tiers.embed(["I love green tea", "我最喜欢绿茶", "The car is red"])
    )
    assert tea.shape == (384,)
    assert float(tea @ tea_zh) > float(tea @ car)  # one meaning across languages, closer than another one


async def test_a_configured_endpoint_always_wins(tmp_path: Path, redis_server_url: str) -> None:
    configured = settings(tmp_path, redis_server_url).model_copy(
        update={"llm": Settings().llm.model_copy(update={"base_url": "http://127.0.0.1:9/v1"})}
    )
    async with open_runtime(configured) as opened:
        assert opened.local_model is None and opened.llm.model == "gpt-4o-mini"
        assert opened.embedder == LOCAL_EMBEDDER  # no embedding model configured: the local one embeds


async def test_a_chat_streams_and_is_remembered(tmp_path: Path, redis_server_url: str) -> None:
    async with Assistant.from_settings(settings(tmp_path, redis_server_url)) as assistant:
        pieces = [p async for p in assistant.chat_stream("ann", "c1", "Hello! I'm Ann and I like green tea.")]
        memory = await assistant.memory_of("ann", "c1")
    assert len(pieces) > 1 and "".join(pieces).strip()
    assert [m.role for m in memory.history] == ["user", "assistant"]
    assert memory.history[1].content == "".join(pieces)


async def test_tiered_tools_are_called_with_valid_arguments(runtime: Runtime) -> None:
    prompt = [
        ChatMessage(role="system", content="You are Lily. Use send_message to talk to the user."),
        ChatMessage(role="user", content="My name is Bob. Please remember it."),
    ]
    events = [e async for e in runtime.llm.stream(prompt, tools=SPECS, tool_choice="required")]
    final = events[-1]
    assert isinstance(final, Completion) and final.content is None
    [call] = final.tool_calls
    spec = next(s for s in SPECS if s.name == call.name)
    jsonschema.validate(json.loads(call.arguments), spec.parameters)
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert deltas[0].name == call.name  # streamed as it was written: the name, then the arguments
    assert json.loads("".join(d.arguments for d in deltas)) == json.loads(call.arguments)


async def test_a_tiered_step_streams_what_the_model_says(runtime: Runtime) -> None:
    prompt = [
        ChatMessage(role="system", content="You are Lily. Use send_message to talk to the user."),
        ChatMessage(role="user", content="Hi, I'm Bob."),
    ]
    said: dict[int, str] = {}
    events = [e async for e in stream_step(runtime.llm, prompt, SPECS, said)]
    final = events[-1]
    assert isinstance(final, Completion)
    streamed = "".join(e for e in events if isinstance(e, str))
    if final.tool_calls:  # a call (send_message's text is streamed as it comes), or a plain answer
        message = json.loads(final.tool_calls[0].arguments).get("message", "")
        assert message.startswith(streamed) if final.tool_calls[0].name == "send_message" else not streamed
    else:
        assert streamed == final.content and streamed.strip()


async def test_tiered_assistant_answers_through_the_embedded_model(
    tmp_path: Path, redis_server_url: str
) -> None:
    config = settings(tmp_path, redis_server_url, mode="tiered", max_tool_steps=2)
    async with Assistant.from_settings(config) as assistant:
        reply = await assistant.chat("bob", "c1", "Hi, I'm Bob.")
    assert reply.strip()


async def test_fact_extraction_is_valid_json_of_the_schema(runtime: Runtime) -> None:
    schema = extract_schema()
    reply = await runtime.memory_llm.complete(
        render_extract("Ann: I moved to Lisbon in March and I am vegetarian.", None), json_schema=schema
    )
    jsonschema.validate(json.loads(reply.content or ""), schema.shape)
    assert all(f.text for f in parse_facts(reply.content or ""))


async def test_graph_extraction_is_a_valid_call(runtime: Runtime) -> None:
    reply = await runtime.memory_llm.complete(
        render_graph("Ann: My sister Maria lives in Porto.", None),
        tools=[RECORD_GRAPH],
        tool_choice="required",
    )
    [call] = reply.tool_calls
    assert call.name == "record_graph"
    jsonschema.validate(json.loads(call.arguments), RECORD_GRAPH.parameters)


async def test_summarization_writes_a_summary(runtime: Runtime) -> None:
    text = (
        "Ann: I moved to Lisbon in March.\nLily: How do you like it?\nAnn: I love the food, I'm vegetarian."
    )
    summary = await summarize_text(runtime.memory_llm, text, max_words=40)
    assert summary.strip()


def _gone(pid: int, within: float = 20) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


async def test_a_model_begun_early_loads_in_its_own_process_and_the_runtime_serves_and_closes_it(
    tmp_path: Path, redis_server_url: str
) -> None:
    config = settings(tmp_path, redis_server_url)
    model = local_model_for(config)
    assert model is not None
    model.begin()
    process = model._process
    model.begin()  # once
    assert process is not None and model._process is process and process.stdout is not None
    assert os.getpgid(process.pid) != os.getpgid(0)  # Ctrl-C in a terminal does not reach it
    # nobody waits for it, and this event loop is blocked: the model loads by itself, and says so
    assert select.select([process.stdout], [], [], 60)[0], "the model did not load by itself"
    os.kill(process.pid, signal.SIGINT)  # ignored as well: the chat that started it decides
    async with open_runtime(config, local_model=model) as opened:
        assert opened.local_model == model.name
        reply = await opened.llm.complete([ChatMessage(role="user", content="Say hello.")])
        assert (reply.content or "").strip()
        url = model.base_url
    assert process.returncode == 0 and model._process is None  # the runtime's exit stopped it
    async with httpx.AsyncClient() as client:
        with pytest.raises(httpx.TransportError):
            await client.get(f"{url}/models", timeout=5)
    model.close()  # idempotent


async def test_a_deferred_model_starts_at_the_first_call_and_stops_with_the_runtime(
    tmp_path: Path, redis_server_url: str
) -> None:
    async with open_runtime(settings(tmp_path, redis_server_url), defer_model=True) as opened:
        llm = opened.llm
        assert isinstance(llm, DeferredLLM) and not llm.made and _models_started() == []
        assert opened.local_model == llm.model == "SmolLM2-135M-Instruct"
        replies = await asyncio.gather(  # two first calls at once
            *(llm.complete([ChatMessage(role="user", content="Say hello.")]) for _ in range(2))
        )
        assert all((r.content or "").strip() for r in replies)
        assert len(_models_started()) == 1  # one for both
        assert llm.usage.totals().calls == 2  # recorded in the ledger it had from the start
        served = await opened_url(llm)
    async with httpx.AsyncClient() as client:  # the runtime's exit stopped it
        with pytest.raises(httpx.TransportError):
            await client.get(f"{served}/models", timeout=5)


def _children(command: str, of: int | None = None) -> list[int]:
    """The running processes that `of` (this one by default) started whose command line has `command`."""
    parent = str(os.getpid() if of is None else of)
    found = subprocess.run(["pgrep", "-P", parent, "-f", command], capture_output=True, check=False)
    return [int(pid) for pid in found.stdout.split()]


def _models_started() -> list[int]:
    """The embedded models' processes this one started and that still run."""
    return _children("local_server")


async def opened_url(llm: DeferredLLM) -> str:
    made = await llm._llm()
    url: str = made._settings.base_url  # type: ignore[attr-defined]
    assert url.startswith("http://127.0.0.1:")
    return url


async def test_a_deferred_start_given_up_leaves_nothing_running_and_the_next_call_starts_it(
    tmp_path: Path, redis_server_url: str
) -> None:
    async with open_runtime(settings(tmp_path, redis_server_url), defer_model=True) as opened:
        hello = [ChatMessage(role="user", content="Say hello.")]
        first = asyncio.ensure_future(opened.llm.complete(hello))
        for _ in range(500):  # until its process runs (it is loading the model)
            if _models_started():
                break
            await asyncio.sleep(0.01)
        assert len(_models_started()) == 1 and not first.done()
        first.cancel()  # the caller gave up: a client gone, a deadline passed
        with pytest.raises(asyncio.CancelledError):
            await first
        assert _models_started() == []  # killed, not left loading
        reply = await opened.llm.complete(hello)
        assert (reply.content or "").strip() and len(_models_started()) == 1


async def test_brain_mcp_starts_the_embedded_model_at_the_first_call_of_it(redis_server_url: str) -> None:
    # an editor starts `brain mcp` with every window: storing and listing memory loads no model
    env = {**os.environ, "BRAIN_REDIS_URL": redis_server_url}
    argv = ["mcp", "--user", "ann", "--set", "memory.facts.in_process_worker=false"]
    async with Client(StdioServerParameters(command=BRAIN, args=argv, env=env)) as client:
        assert "converse" in {t.name for t in (await client.list_tools()).tools}
        added = await client.call_tool("add_memory", {"text": "I live in Porto", "infer": False})
        assert not added.is_error, added.content
        (server,) = _children("brain")
        assert _children("local_server", of=server) == []
        answer = await client.call_tool("converse", {"text": "Say hello."})
        assert not answer.is_error, answer.content
        assert len(_children("local_server", of=server)) == 1


async def test_a_model_that_cannot_start_raises_when_entered_and_closes_quietly(tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_text("not a model")
    model = LocalModel(broken, LocalSettings(parallel=1))
    model.begin()
    with pytest.raises(LLMError, match=r"did not start: .+"):
        async with model:
            pass
    model.close()


async def test_an_enter_given_up_while_it_loads_leaves_nothing_running() -> None:
    model = local_model_for(Settings())
    assert model is not None
    entering = asyncio.ensure_future(model.__aenter__())
    await asyncio.sleep(0.05)
    process = model._process
    assert process is not None and process.returncode is None  # loading
    entering.cancel()
    with pytest.raises(asyncio.CancelledError):
        await entering
    assert process.returncode is not None and model._process is None  # killed: nothing to keep
    model.close()  # idempotent


def test_the_model_never_outlives_the_process_that_started_it(tmp_path: Path) -> None:
    code = (
        "import sys, time; from brain import Settings; from brain.llm.local import local_model_for; "
        "model = local_model_for(Settings()); model.begin(); print(model._process.pid, flush=True); "
        "time.sleep(600)"
    )
    starter = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert starter.stdout is not None
    with starter, starter.stdout:
        child = int(starter.stdout.readline())
        assert not _gone(child, within=1)  # loading, or serving
        starter.kill()  # SIGKILL: no exit code of its own runs
        starter.wait()
    assert _gone(child), "the embedded model outlived the process that started it"


def test_brain_chat_answers_with_the_embedded_model(tmp_path: Path, redis_server_url: str) -> None:
    env = {**os.environ, "BRAIN_REDIS_URL": redis_server_url}
    command = [str(Path(sys.executable).parent / "brain"), "chat", "--set", "memory.facts.enabled=false"]
    result = subprocess.run(command, input="Hello!\n", capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() and "embedded tiny model" in result.stderr
