"""OpenTelemetry with the SDK's in-memory exporter: spans per turn, LLM call (GenAI conventions), Redis
script, search and background batch; counters; and nothing at all when telemetry is off."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis.asyncio as aioredis
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from brain import telemetry
from brain.backends.redis import RedisBackend
from brain.llm.openai_client import OpenAILLM
from brain.runtime import local_runtime
from brain.settings import Settings, TelemetrySettings
from roles.assistant import Assistant
from roles.fact_worker import FactWorker
from tests.support.openai_server import Chat, Fault, ScriptedOpenAIServer


class Recorded:
    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.metrics = InMemoryMetricReader()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.meter_provider = MeterProvider(metric_readers=[self.metrics])

    def points(self, name: str) -> list[Any]:
        data = self.metrics.get_metrics_data()
        return [
            point
            for resource in (data.resource_metrics if data else ())
            for scope in resource.scope_metrics
            for metric in scope.metrics
            if metric.name == name
            for point in metric.data.data_points
        ]


@pytest.fixture
def recorded() -> Iterator[Recorded]:
    found = Recorded()
    telemetry.enable(found.tracer_provider, found.meter_provider)
    yield found
    telemetry.disable()


def _settings(server: ScriptedOpenAIServer) -> Settings:
    return Settings.model_validate(
        {
            "llm": {"base_url": server.url, "api_key": "sk-test", "max_retries": 0},
            "memory": {"facts": {"in_process_worker": False}},
        }
    )


async def test_a_turn_is_a_span_with_its_llm_call_scripts_and_search_inside(
    recorded: Recorded, openai_server: ScriptedOpenAIServer, redis_client: aioredis.Redis
) -> None:
    openai_server.script(Chat("Hello Ann.", usage=(42, 7)))
    settings = _settings(openai_server)
    async with OpenAILLM.from_settings(settings.llm) as llm:
        assistant = Assistant.for_runtime(
            local_runtime(llm, settings=settings, backend=RedisBackend.for_settings(redis_client, settings))
        )
        assert await assistant.chat("ann", "c1", "Hi, I am Ann from Lisbon") == "Hello Ann."
    spans = {s.name: s for s in recorded.spans.get_finished_spans()}
    turn, call = spans["brain.turn"], spans["chat gpt-4o-mini"]
    assert call.parent is not None and call.parent.span_id == turn.context.span_id
    assert call.attributes is not None and dict(call.attributes) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.usage.input_tokens": 42,
        "gen_ai.usage.output_tokens": 7,
    }
    assert turn.attributes is not None and turn.attributes["brain.turn.llm_calls"] == 1
    # the turn's write queues the chat for fact extraction in the same script (standalone Redis)
    assert {"redis.script chat.load", "redis.script chat.write_push", "brain.search"} <= set(spans)
    write = spans["redis.script chat.write_push"]
    assert write.parent.span_id == turn.context.span_id  # type: ignore[union-attr]
    assert write.attributes["db.system.name"] == "redis"  # type: ignore[index]
    tokens = {
        p.attributes["gen_ai.token.type"]: p.value for p in recorded.points("gen_ai.client.token.usage.total")
    }
    assert tokens == {"input": 42, "output": 7}
    assert [p.value for p in recorded.points("brain.llm.calls")] == [1]


async def test_a_failed_batch_is_an_error_span_and_counted(
    recorded: Recorded, openai_server: ScriptedOpenAIServer, redis_client: aioredis.Redis
) -> None:
    openai_server.script(Chat("Hi."), Fault(500))
    settings = _settings(openai_server)
    async with OpenAILLM.from_settings(settings.llm) as llm:
        runtime = local_runtime(
            llm, settings=settings, backend=RedisBackend.for_settings(redis_client, settings)
        )
        await Assistant.for_runtime(runtime).chat("ann", "c1", "I adopted a cat named Biscuit")
        report = await FactWorker(runtime).run_once()
    assert report.failed == 1
    spans = recorded.spans.get_finished_spans()
    batch = next(s for s in spans if s.name == "brain.facts.batch")
    assert batch.status.status_code == StatusCode.ERROR
    failed_call = [
        s for s in spans if s.name == "chat gpt-4o-mini" and s.status.status_code == StatusCode.ERROR
    ]
    assert len(failed_call) == 1 and failed_call[0].parent.span_id == batch.context.span_id  # type: ignore[union-attr]
    errors = {p.attributes["brain.error.source"]: p.value for p in recorded.points("brain.errors")}
    assert errors == {"llm": 1, "facts.batch": 1}
    depth = recorded.points("brain.queue.depth")
    assert [p.value for p in depth] == [1]  # the failed batch's entry is still pending


async def test_off_means_no_spans_and_no_counters(
    openai_server: ScriptedOpenAIServer, redis_client: aioredis.Redis
) -> None:
    found = Recorded()
    telemetry.enable(found.tracer_provider, found.meter_provider)
    telemetry.configure(TelemetrySettings(enabled=False))  # configured off: what was on goes
    assert not telemetry.enabled()
    assert telemetry.span("x") is telemetry.span("y")  # one shared no-op, nothing made per call
    openai_server.script(Chat("Hello."))
    settings = _settings(openai_server)
    async with OpenAILLM.from_settings(settings.llm) as llm:
        await Assistant.for_runtime(
            local_runtime(llm, settings=settings, backend=RedisBackend.for_settings(redis_client, settings))
        ).chat("ann", "c1", "Hi")
    assert found.spans.get_finished_spans() == ()
    assert found.points("brain.llm.calls") == []


def test_configure_with_the_console_exporter_turns_it_on() -> None:
    telemetry.configure(TelemetrySettings(enabled=True, exporter="console"))
    try:
        assert telemetry.enabled()
    finally:
        telemetry.disable()


def test_fastapi_makes_spans_of_its_own_only_while_telemetry_is_on(monkeypatch: pytest.MonkeyPatch) -> None:
    from opentelemetry import trace

    from roles.http import create_app

    monkeypatch.setattr(trace, "get_tracer_provider", TracerProvider)  # a host's global provider
    llm = {"base_url": "http://127.0.0.1:9/v1"}
    off = create_app(Settings.model_validate({"llm": llm}))
    on = create_app(Settings.model_validate({"llm": llm, "telemetry": {"enabled": True}}))
    assert not off._native_telemetry.enabled() and on._native_telemetry.enabled()
