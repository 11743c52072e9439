"""OpenTelemetry traces and metrics (the `otel` extra), off unless configured.

Off (the default), `span()` hands back one shared do-nothing context manager and the counters return at
once: nothing is imported, made or recorded. On (`telemetry.enabled`, set up once at the edge by `configure`,
or by `enable` with the caller's providers), there is a span per turn, LLM call (GenAI semantic conventions:
operation, model, token usage), Redis script, search and background batch, and counters of LLM calls,
tokens and errors, with a gauge of the fact queue's depth.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from brain.errors import ConfigError

if TYPE_CHECKING:
    from brain.llm.usage import Usage
    from brain.settings import TelemetrySettings

__all__ = [
    "TracedScript",
    "configure",
    "count_error",
    "disable",
    "enable",
    "enabled",
    "llm_call",
    "queue_depth",
    "span",
]

Attributes = Mapping[str, str | int | float | bool]

_OFF: contextlib.nullcontext[None] = contextlib.nullcontext()


@dataclass
class _Instruments:
    tracer: Any
    calls: Any
    tokens: Any
    errors: Any
    depth: int = 0


_on: _Instruments | None = None


def enabled() -> bool:
    return _on is not None


def enable(tracer_provider: Any = None, meter_provider: Any = None) -> None:
    """Turn telemetry on with these providers (default: OpenTelemetry's global ones)."""
    global _on
    try:
        from opentelemetry import metrics, trace
    except ImportError as exc:  # pragma: no cover - the otel extra is missing
        raise ConfigError("telemetry needs OpenTelemetry: pip install 'brain-assistant[otel]'") from exc
    tracer = (tracer_provider or trace.get_tracer_provider()).get_tracer("brain-assistant")
    meter = (meter_provider or metrics.get_meter_provider()).get_meter("brain-assistant")
    instruments = _Instruments(
        tracer=tracer,
        calls=meter.create_counter("brain.llm.calls", description="LLM calls made"),
        tokens=meter.create_counter("gen_ai.client.token.usage.total", unit="{token}", description="tokens"),
        errors=meter.create_counter("brain.errors", description="failed LLM calls, turns and batches"),
    )

    def observe(_options: Any) -> Any:
        return [metrics.Observation(instruments.depth)]

    meter.create_observable_gauge("brain.queue.depth", [observe], description="turns waiting for facts")
    _on = instruments


def disable() -> None:
    global _on
    _on = None


def configure(settings: TelemetrySettings) -> None:
    """Set telemetry up from settings (the CLI's edge): the providers of `exporter`, or the global ones."""
    if not settings.enabled:
        disable()
        return
    if settings.exporter == "none":
        enable()
        return
    try:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter
    except ImportError as exc:
        raise ConfigError(
            f"telemetry.exporter {settings.exporter} needs the SDK: pip install 'brain-assistant[otel]'"
        ) from exc
    resource = Resource.create({"service.name": settings.service_name})
    tracer_provider = TracerProvider(resource=resource)
    if settings.exporter == "console":
        exporter: Any = ConsoleSpanExporter()
    else:
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError as exc:
            raise ConfigError(
                "telemetry.exporter otlp needs opentelemetry-exporter-otlp-proto-http installed"
            ) from exc
        exporter = OTLPSpanExporter()
    tracer_provider.add_span_processor(BatchSpanProcessor(exporter))
    enable(tracer_provider, MeterProvider(resource=resource))


def span(name: str, attributes: Attributes | None = None) -> contextlib.AbstractContextManager[Any]:
    """A span around a block (current while it runs; an exception marks it failed). Off: a no-op."""
    if _on is None:
        return _OFF
    return _span(_on, name, attributes)


@contextlib.contextmanager
def _span(on: _Instruments, name: str, attributes: Attributes | None) -> Iterator[Any]:
    with on.tracer.start_as_current_span(name, attributes=dict(attributes or {})) as current:
        yield current


def llm_call(
    operation: str, model: str, started: float, usage: Usage | None = None, error: BaseException | None = None
) -> None:
    """Record one finished LLM call (`started`: its `time.perf_counter()`), as a GenAI client span ending
    now, and in the counters. Made after the call, so a streamed reply needs no span kept open."""
    if _on is None:
        return
    from opentelemetry.trace import Status, StatusCode

    elapsed_ns = int((time.perf_counter() - started) * 1e9)
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": operation,
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": model,
    }
    if usage is not None:
        attributes["gen_ai.usage.input_tokens"] = usage.prompt_tokens
        attributes["gen_ai.usage.output_tokens"] = usage.completion_tokens
    current = _on.tracer.start_span(
        f"{operation} {model}", attributes=attributes, start_time=time.time_ns() - elapsed_ns
    )
    if error is not None:
        current.set_status(Status(StatusCode.ERROR, type(error).__name__))
        current.set_attribute("error.type", type(error).__name__)
        _on.errors.add(1, {"brain.error.source": "llm"})
    current.end()
    _on.calls.add(1, {"gen_ai.operation.name": operation, "gen_ai.request.model": model})
    if usage is not None:
        for kind, value in (("input", usage.prompt_tokens), ("output", usage.completion_tokens)):
            _on.tokens.add(value, {"gen_ai.token.type": kind, "gen_ai.request.model": model})


def count_error(source: str) -> None:
    """Count one failure of a turn, batch or request (`source` names which)."""
    if _on is not None:
        _on.errors.add(1, {"brain.error.source": source})


def queue_depth(depth: int) -> None:
    """The fact queue's depth as last seen (the gauge reports it)."""
    if _on is not None:
        _on.depth = depth


class TracedScript:
    """A registered Lua script whose every call is a span (`redis.script <name>`) when telemetry is on."""

    def __init__(self, script: Any, name: str) -> None:
        self._script = script
        self.name = name

    def __call__(self, keys: Any = None, args: Any = None, client: Any = None) -> Awaitable[Any]:
        """The script's call, to await. With telemetry off, the script's own (no frame of this one's
        resumed on every call: a turn makes several)."""
        if _on is None:
            return self._script(keys=keys, args=args, client=client)  # type: ignore[no-any-return]
        return self._traced(_on, keys, args, client)

    async def _traced(self, on: Any, keys: Any, args: Any, client: Any) -> Any:
        attributes = {"db.system.name": "redis", "db.operation.name": "EVALSHA", "brain.script": self.name}
        with _span(on, f"redis.script {self.name}", attributes):
            return await self._script(keys=keys, args=args, client=client)
