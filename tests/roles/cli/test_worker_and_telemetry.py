"""`brain worker` reports the LLM calls it made (a failed batch spent its calls too), and `brain chat` and
`brain worker` set telemetry up from settings as `brain serve` does."""

from __future__ import annotations

import io
import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import opentelemetry.metrics
import opentelemetry.trace
import pytest
import redis.asyncio as aioredis

from brain import MemorySettings, telemetry
from brain.settings import FactSettings
from brain.testing import ScriptedLLM
from roles.assistant import Assistant
from roles.cli.main import main
from roles.fact_worker import FactWorker
from tests.roles.cli.test_chat import brain, env_for
from tests.roles.test_telemetry import Recorded
from tests.support.openai_server import Chat, ScriptedOpenAIServer
from tests.support.runtime import make_runtime


def extracted(*texts: str) -> str:
    return json.dumps({"facts": [{"text": t, "category": "personal"} for t in texts]})


async def test_a_failed_batch_still_counts_its_calls(redis_client: aioredis.Redis) -> None:
    # One exchange per batch: three batches, the third reply is not JSON and fails its batch (and the chat).
    settings = MemorySettings(facts=FactSettings(enabled=True, batch_turns=2))
    memory_llm = ScriptedLLM([extracted("Lives in Oslo"), extracted("Has a cat"), "not json"])
    runtime = make_runtime(
        ScriptedLLM(["ok"] * 3), client=redis_client, memory_settings=settings, memory_llm=memory_llm
    )
    assistant = Assistant(runtime)
    for text in ("I live in Oslo", "I have a cat", "I like tea"):
        await assistant.chat("ann", "c", text)
    report = await FactWorker(runtime).run_once(block_ms=None)
    assert report.failed == 1  # the chat stays pending from its failed batch on
    assert report.turns == 4  # the two batches before it were applied and recorded done
    assert report.calls == len(memory_llm.calls) == 3


def test_brain_worker_once_reports_the_calls_it_made(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Chat("Noted."), Chat("this is not JSON"))
    env = env_for(openai_server)
    facts = ["--set", "memory.facts.enabled=true", "--set", "memory.facts.in_process_worker=false"]
    assert brain("chat", *facts, env=env, stdin="I live in Rome\n").returncode == 0
    worker = brain("worker", "--once", *facts, env=env)
    assert worker.returncode == 1  # the batch failed: it stays queued for the next worker
    assert worker.stdout == "applied 0 turns of 1 chats (1 LLM calls)\n"


@pytest.fixture
def global_providers(monkeypatch: pytest.MonkeyPatch) -> Iterator[Recorded]:
    """OpenTelemetry's global providers are the SDK's in-memory ones (what `telemetry.exporter: none`
    uses); the CLI's logging handler and telemetry are undone afterwards."""
    found = Recorded()
    monkeypatch.setattr(opentelemetry.trace, "get_tracer_provider", lambda: found.tracer_provider)
    monkeypatch.setattr(opentelemetry.metrics, "get_meter_provider", lambda: found.meter_provider)
    handlers = list(logging.getLogger().handlers)
    level = logging.getLogger().level
    yield found
    telemetry.disable()
    for handler in logging.getLogger().handlers:
        if handler not in handlers:
            logging.getLogger().removeHandler(handler)
    logging.getLogger().setLevel(level)


TELEMETRY_ON = ["--set", "telemetry.enabled=true", "--set", "telemetry.exporter=none"]


def cli_env(server: ScriptedOpenAIServer, redis_url: str, tmp_path: Path) -> dict[str, str]:
    return {
        "OPENAI_BASE_URL": server.url,
        "OPENAI_API_KEY": "sk-test",
        "BRAIN_REDIS_URL": redis_url,
        "BRAIN_HOME": str(tmp_path / "home"),
        "HOME": str(tmp_path),
    }


def test_brain_chat_and_worker_configure_telemetry(
    global_providers: Recorded,
    openai_server: ScriptedOpenAIServer,
    redis_server_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    openai_server.script(Chat("Noted.", usage=(30, 5)), Chat(extracted("Lives in Rome"), usage=(50, 9)))
    env = cli_env(openai_server, redis_server_url, tmp_path)
    facts = ["--set", "memory.facts.enabled=true", "--set", "memory.facts.in_process_worker=false"]
    monkeypatch.setattr(sys, "stdin", io.StringIO("I live in Rome\n"))
    assert main(["chat", "--user", "otel-chat", *facts, *TELEMETRY_ON], environ=env) == 0
    assert capsys.readouterr().out == "Noted.\n"
    spans = [s.name for s in global_providers.spans.get_finished_spans()]
    assert "brain.turn" in spans and "chat gpt-4o-mini" in spans
    assert main(["worker", "--once", *facts, *TELEMETRY_ON], environ=env) == 0
    assert capsys.readouterr().out == "applied 2 turns of 1 chats (1 LLM calls)\n"
    spans = [s.name for s in global_providers.spans.get_finished_spans()]
    assert "brain.facts.batch" in spans and spans.count("chat gpt-4o-mini") == 2
    calls = global_providers.points("brain.llm.calls")
    assert sum(p.value for p in calls) == 2


def test_telemetry_stays_off_by_default(
    global_providers: Recorded,
    openai_server: ScriptedOpenAIServer,
    redis_server_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    telemetry.enable(global_providers.tracer_provider, global_providers.meter_provider)  # on from before
    openai_server.script(Chat("Hello."))
    monkeypatch.setattr(sys, "stdin", io.StringIO("hi\n"))
    env = cli_env(openai_server, redis_server_url, tmp_path)
    assert main(["chat", "--user", "otel-off", "--set", "memory.facts.enabled=false"], environ=env) == 0
    assert not telemetry.enabled() and global_providers.spans.get_finished_spans() == ()
