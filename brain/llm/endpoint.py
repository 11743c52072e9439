"""The OpenAI SDK client an `OpenAILLM` talks through: building it from settings, and what it (or a
misbehaving server) can raise, as an `LLMError` that never carries the API key.

The SDK is imported where a client is built, never with this module: importing `openai` takes ~0.35 s
(its every type), a third of `brain chat`'s start, and a streamed chat over `ChatHTTP` needs none of it.
Until it is imported, no exception of its can exist, so `failures()` and the checks below read it from
`sys.modules`."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pydantic

from brain.errors import ConfigError, ContextOverflowError, LLMError, LLMTimeoutError
from brain.llm.json_reply import excerpt
from brain.llm.overflow import context_limit, is_context_overflow
from brain.llm.wire import MalformedReply
from brain.logs import redact
from brain.settings import LLMSettings

if TYPE_CHECKING:
    import openai

__all__ = [
    "as_llm_error",
    "check_endpoint",
    "create_openai_client",
    "failures",
    "is_overflow",
    "plain_local",
    "refused_request",
]

_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
_FAILURES = (pydantic.ValidationError, ValueError, KeyError, TypeError, AttributeError)


def failures() -> tuple[type[Exception], ...]:
    """What the SDK or a misbehaving server can throw at us (`except failures() as exc`); all become
    `LLMError` (`as_llm_error`). The SDK's errors are among them once it is imported."""
    if not _imported():
        return _FAILURES
    import openai

    return (openai.OpenAIError, *_FAILURES)


def create_openai_client(settings: LLMSettings) -> openai.AsyncOpenAI:
    """A client with the settings' endpoint, timeout and retry budget (the SDK retries 408/409/429/5xx and
    connection errors with backoff, honouring Retry-After). The caller owns it and must close it."""
    check_endpoint(settings)
    import openai

    key = settings.api_key.get_secret_value() if settings.api_key is not None else None
    if settings.api_type == "azure":
        assert settings.base_url is not None
        return openai.AsyncAzureOpenAI(
            api_key=key,
            azure_endpoint=settings.base_url,
            api_version=settings.api_version,
            timeout=settings.timeout,
            max_retries=settings.max_retries,
        )
    return openai.AsyncOpenAI(
        # Local servers (Ollama, llama.cpp, vLLM) need no key, but the SDK insists on one.
        api_key=key or "not-needed",
        base_url=settings.base_url,
        timeout=settings.timeout,
        max_retries=settings.max_retries,
        http_client=_direct() if _plain_local(settings) else None,
    )


def check_endpoint(settings: LLMSettings) -> None:
    """`ConfigError` for settings no client can be built from (an Azure endpoint half set)."""
    if settings.api_type == "azure" and (settings.base_url is None or settings.api_version is None):
        raise ConfigError("llm.api_type azure needs llm.base_url (Azure endpoint) and llm.api_version")


def _direct() -> openai.DefaultAsyncHttpxClient:
    import openai

    return openai.DefaultAsyncHttpxClient(verify=False, trust_env=False)


def plain_local(url: str) -> bool:
    """Whether `url` is plain HTTP on this machine (the embedded model, Ollama). Its client loads no
    certificate authorities, since no TLS is spoken (~30 ms a client, at every start). It uses no proxy:
    one the environment names (`HTTP_PROXY`) serves the network and cannot reach this machine's loopback,
    so the embedded model did not answer where one was set. Pure."""
    parts = urlsplit(url)
    return parts.scheme == "http" and parts.hostname in _LOOPBACK


def _plain_local(settings: LLMSettings) -> bool:
    return plain_local(settings.base_url or "")


def as_llm_error(model: str, exc: Exception, secrets: Sequence[str]) -> LLMError:
    """The failure as an `LLMError`, with the API key masked should the endpoint echo it: a prompt the
    endpoint found too long for the model's window is a `ContextOverflowError`."""
    error = _describe(model, exc)
    if not secrets:
        return error
    if isinstance(error, ContextOverflowError):
        return ContextOverflowError(redact(str(error), secrets), limit=error.limit)
    return type(error)(redact(str(error), secrets))


def is_overflow(exc: Exception) -> bool:
    """Whether `exc` is the endpoint saying the prompt is longer than the model's context window."""
    if not _imported():
        return False
    import openai

    return isinstance(exc, openai.APIStatusError) and is_context_overflow(
        exc.status_code, exc.body, exc.message
    )


def refused_request(exc: Exception) -> openai.APIStatusError | None:
    """`exc` when it is the endpoint refusing the request itself (HTTP 400 or 422), else None."""
    if not _imported():
        return None
    import openai

    return exc if isinstance(exc, openai.BadRequestError | openai.UnprocessableEntityError) else None


def _imported() -> bool:
    """Whether the SDK is imported: before, no exception of its can exist."""
    return "openai" in sys.modules


def _describe(model: str, exc: Exception) -> LLMError:
    if not _imported():
        return _describe_other(model, exc)
    import openai

    if isinstance(exc, openai.APIStatusError) and is_overflow(exc):
        limit = context_limit(exc.body, exc.message)
        window = f" of {limit} tokens" if limit is not None else ""
        return ContextOverflowError(
            f"{model}: the prompt does not fit the model's context window{window} (HTTP {exc.status_code} "
            f"from the LLM endpoint: {exc.message})",
            limit=limit,
        )
    if isinstance(exc, openai.APIStatusError):
        return LLMError(f"{model}: HTTP {exc.status_code} from the LLM endpoint: {exc.message}")
    if isinstance(exc, openai.APITimeoutError):
        return LLMTimeoutError(f"{model}: the LLM endpoint timed out (retries spent)")
    if isinstance(exc, openai.APIConnectionError):
        return LLMError(f"{model}: cannot reach the LLM endpoint (retries spent): {exc}")
    if isinstance(exc, openai.APIResponseValidationError):
        return LLMError(f"{model}: malformed reply from the LLM endpoint: {type(exc).__name__}")
    return _describe_other(model, exc)


def _describe_other(model: str, exc: Exception) -> LLMError:
    if isinstance(exc, MalformedReply):
        return LLMError(f"{model}: malformed reply from the LLM endpoint: {exc}")
    if isinstance(exc, json.JSONDecodeError):
        return LLMError(f"{model}: malformed reply from the LLM endpoint, not JSON: {excerpt(exc.doc)}")
    if isinstance(exc, pydantic.ValidationError):
        return LLMError(f"{model}: malformed reply from the LLM endpoint: {type(exc).__name__}")
    return LLMError(f"{model}: LLM call failed: {type(exc).__name__}: {exc}")
