"""Chat completions without the SDK's per-call work: the request every turn makes.

With many streams at once the `openai` SDK over httpx costs milliseconds of CPU per call (request options,
a connection pool that scans every pooled connection, stream wrappers); `benchmarks/serve.py` measured ~3.7
ms per streamed call at 500 streams, against ~0.25 ms for the same call over aiohttp and ~0.07 ms over
`brain.llm.lean_http` (asyncio protocols and httptools), which `ChatHTTP` uses. It applies where that
transport does and no proxy is set; elsewhere the SDK sends the request (through the proxy). Made from
settings (`for_settings`), it sends the request of the client `create_openai_client` would build (its
URL, authorization, organization and project; our own `User-Agent`) without importing the SDK, a third of
`brain chat`'s start; made from a client (`for_client`), that client's request, headers and all. It keeps
the SDK's behaviour: retries with the same rules (`brain.llm.retries`), the same exceptions
(`openai.APIStatusError` and its subclasses, `APIConnectionError`, `APITimeoutError`, an `APIError` for an
error inside a stream: the SDK is imported when one is made), the same stream reading (server-sent events
up to `[DONE]`). Everything else stays on the SDK.

One instance per client, used on one event loop; `aclose()` closes its connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import ssl
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from pydantic_core import PydanticSerializationError, to_json

from brain.llm.endpoint import plain_local
from brain.llm.events import StreamEvents, decode_json, endpoint_request
from brain.llm.lean_http import LeanHTTP, LeanResponse
from brain.llm.retries import retry_delay, should_retry
from brain.settings import LLMSettings

if TYPE_CHECKING:
    import openai

__all__ = ["ChatHTTP"]

_log = logging.getLogger("brain.llm")
_DECODED = ("content-encoding", "content-length", "transfer-encoding")  # the body is already decoded
_OPENAI = "https://api.openai.com/v1"  # the SDK's endpoint where none is set
_PATH = "/chat/completions"
_USER_AGENT = "brain-assistant"  # our own: the SDK's names the SDK, which does not send these
_FROM_ENVIRONMENT = (("OpenAI-Organization", "OPENAI_ORG_ID"), ("OpenAI-Project", "OPENAI_PROJECT_ID"))


class ChatHTTP:
    """POST `/chat/completions` to `url` with `headers`, retried up to `retries` times, each read within
    `seconds`. Made with `for_settings` or `for_client`, where it applies."""

    def __init__(self, url: str, headers: Mapping[str, str], retries: int, seconds: float | None) -> None:
        self.url = url  # the chat URL: the endpoint's base, then `_PATH`
        self._headers = dict(headers)
        self._retries = retries
        self._seconds = seconds
        self._lean: LeanHTTP | None = None

    @classmethod
    def for_settings(cls, settings: LLMSettings) -> ChatHTTP | None:
        """Chat requests to the endpoint of `settings` as the client `create_openai_client` builds sends
        them (its URL, authorization, organization and project; `OPENAI_BASE_URL`, `OPENAI_ORG_ID` and
        `OPENAI_PROJECT_ID` read as the SDK reads them), without building one: the SDK is not imported
        for them (`brain.llm.endpoint`). None for Azure, and as `for_client` says."""
        if settings.api_type != "openai":
            return None
        base = settings.base_url or os.environ.get("OPENAI_BASE_URL") or _OPENAI
        key = settings.api_key.get_secret_value() if settings.api_key is not None else ""
        headers = {
            "Accept": "application/json",
            "Content-Type": "application/json",
            "User-Agent": _USER_AGENT,
            "Authorization": f"Bearer {key or 'not-needed'}",
        }
        for header, variable in _FROM_ENVIRONMENT:
            value = os.environ.get(variable)
            if value is not None:  # set but empty, it is sent as the SDK sends it
                headers[header] = value
        return cls._made(base, headers, settings.max_retries, settings.timeout)

    @classmethod
    def for_client(cls, client: openai.AsyncOpenAI) -> ChatHTTP | None:
        """Chat requests as `client` sends them, or None where the lean transport does not apply (see
        `LeanHTTP.applies`) or the environment names a proxy for the endpoint (`HTTPS_PROXY`,
        `HTTP_PROXY`, `ALL_PROXY`, minus `NO_PROXY`, as httpx reads them; never for plain HTTP on this
        machine, `brain.llm.endpoint.plain_local`): the SDK's client then sends them, through the proxy."""
        headers = {**client.default_headers, **client.auth_headers}
        kept = {k: v for k, v in headers.items() if isinstance(v, str)}
        timeout = client.timeout
        seconds = timeout if isinstance(timeout, int | float) else getattr(timeout, "read", None)
        return cls._made(str(client.base_url), kept, client.max_retries, seconds)

    @classmethod
    def _made(
        cls, base: str, headers: dict[str, str], retries: int, seconds: float | None
    ) -> ChatHTTP | None:
        url = base.rstrip("/") + _PATH
        proxied = _env_proxy(url) is not None and not plain_local(url)
        if proxied or not LeanHTTP.applies(url, headers):
            return None
        return cls(url, headers, retries, seconds)

    async def aclose(self) -> None:
        if self._lean is not None:
            await self._lean.aclose()
            self._lean = None

    async def models(self) -> Any:
        """The endpoint's JSON answer to `GET /models` (its model list), asked once, no retries; None for
        no answer, an error status or one that is not JSON (said in the debug log)."""
        url = self.url.removesuffix(_PATH) + "/models"
        lean = self._http(url, "GET")
        try:
            response = await lean.send()
            try:
                text = await response.read()
            finally:
                response.release()
        except OSError as exc:
            _log.debug("no model list from %s: %s", url, exc)
            return None
        finally:
            await lean.aclose()
        if response.status >= 300:
            _log.debug("no model list from %s: HTTP %d", url, response.status)
            return None
        try:
            return decode_json(text)
        except ValueError:
            _log.debug("no model list from %s: not JSON", url)
            return None

    async def complete(self, body: Mapping[str, Any]) -> Any:
        """The endpoint's JSON answer to a non-streamed request."""
        response = await self._send(body)
        try:
            text = await response.read()
        except OSError as exc:
            raise _failure(self.url, exc) from exc
        finally:
            response.release()
        return decode_json(text)

    async def stream(self, body: Mapping[str, Any]) -> AsyncIterator[list[Any]]:
        """The decoded JSON of the events of a streamed answer, up to `[DONE]`, in batches: those whose
        bytes were there together (a batch is never empty); the connection goes back to the pool (or is
        closed, when the stream is left early) as the iterator ends."""
        response = await self._send(body)
        done = False
        try:
            events = StreamEvents()  # one generator from the socket's pieces to the events (`events.py`)
            while not events.done:
                try:
                    piece = await response.content.readany()
                except OSError as exc:
                    raise _failure(self.url, exc) from exc
                if not piece:
                    break
                batch = events.feed(piece)
                if batch:
                    yield batch
            done = await _drained(response)
        finally:
            if done:
                response.release()
            else:
                response.close()

    def _pool(self) -> LeanHTTP:
        """The connections, made at the first request (the CA bundle is read then, once)."""
        if self._lean is None:
            self._lean = self._http(self.url)
        return self._lean

    def _http(self, url: str, method: str = "POST") -> LeanHTTP:
        """Connections for `method` requests to `url`, with this client's headers and read deadline."""
        tls = _tls_context() if url.startswith("https:") else None
        seconds = self._seconds
        return LeanHTTP(
            url, self._headers, connect_timeout=seconds, read_timeout=seconds, tls=tls, method=method
        )

    async def _send(self, body: Mapping[str, Any]) -> LeanResponse:
        """The response (2xx) to `body`, retried as the SDK retries; the SDK's exception otherwise."""
        data = _body(body)
        attempt = 0
        while True:
            headers: Mapping[str, str] = {}
            _log.debug("POST %s (attempt %d of %d)", self.url, attempt + 1, self._retries + 1)
            try:
                response = await self._pool().send(data)
            except OSError as exc:  # TimeoutError among them
                error: openai.APIError = _failure(self.url, exc)
            else:
                if response.status < 300:
                    return response
                error, headers = await _status_error(self.url, response), _lower(response.headers)
                if not should_retry(response.status, headers):
                    raise error
            if attempt >= self._retries:
                raise error
            delay = retry_delay(attempt, headers)
            # the SDK's words, at its level: what `brain chat` shows as progress while retrying
            _log.info("Retrying request to /chat/completions in %f seconds (%s)", delay, type(error).__name__)
            await asyncio.sleep(delay)
            attempt += 1


async def _drained(response: LeanResponse) -> bool:
    """Whether the rest of a stream after `[DONE]` (its end) was read within a second: the connection
    can then be reused. A server that holds the stream open after `[DONE]` gets its connection closed."""
    if response.content.at_eof():
        return True
    try:
        async with asyncio.timeout(1.0):
            await response.content.read()
    except TimeoutError:
        return False
    return True


def _env_proxy(url: str) -> str | None:
    """The proxy the environment names for `url` (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, minus
    `NO_PROXY`), as httpx finds it."""
    host = urllib.parse.urlsplit(url).hostname or ""
    if urllib.request.proxy_bypass(host):
        return None
    proxies = urllib.request.getproxies_environment()
    return proxies.get(url.split(":", 1)[0]) or proxies.get("all")


def _tls_context() -> ssl.SSLContext:
    """Certificates as httpx checks them: `SSL_CERT_FILE` / `SSL_CERT_DIR`, else certifi's bundle."""
    cafile, capath = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
    if cafile is None and capath is None:
        with contextlib.suppress(ImportError):
            import certifi

            cafile = certifi.where()
    return ssl.create_default_context(cafile=cafile, capath=capath)


def _lower(headers: Mapping[str, str]) -> dict[str, str]:
    return {k.lower(): v for k, v in headers.items()}


def _body(body: Mapping[str, Any]) -> bytes:
    """`body` as JSON: pydantic-core's encoder (a third of `json.dumps`' time for a turn's prompt); a text
    that UTF-8 cannot carry (a lone surrogate) is written as `json.dumps` writes it, escaped."""
    try:
        return to_json(body)
    except PydanticSerializationError:
        return json.dumps(body).encode()


def _failure(url: str, exc: BaseException) -> openai.APIError:
    """The SDK's exception for a request that got no answer: a timeout, or no connection."""
    import openai  # imported where its errors are made (`brain.llm.endpoint`)

    if isinstance(exc, TimeoutError):
        return openai.APITimeoutError(request=endpoint_request(url))
    return openai.APIConnectionError(message=f"Connection error: {exc}", request=endpoint_request(url))


async def _status_error(url: str, response: LeanResponse) -> openai.APIStatusError:
    """The SDK's exception for an error status, with the body it would carry (the `error` object when
    there is one), read in full and the connection released."""
    import httpx2
    import openai

    try:
        raw = await response.read()
    except OSError:
        raw = b""
    finally:
        response.release()
    text = raw.decode(errors="replace").strip()
    body: Any = text
    message = f"Error code: {response.status}"
    try:
        body = json.loads(text)
    except ValueError:
        pass
    else:  # only the designated message goes into the text; the whole body stays on the exception
        error = body.get("error", body) if isinstance(body, dict) else None
        said = error.get("message") if isinstance(error, dict) else None
        if isinstance(said, str) and said:
            message += f" - {said}"
    kept = [(k, v) for k, v in response.headers.items() if k.lower() not in _DECODED]
    reply = httpx2.Response(response.status, headers=kept, content=raw, request=endpoint_request(url))
    data = body.get("error", body) if isinstance(body, dict) else body
    kinds: dict[int, type[openai.APIStatusError]] = {
        400: openai.BadRequestError,
        401: openai.AuthenticationError,
        403: openai.PermissionDeniedError,
        404: openai.NotFoundError,
        409: openai.ConflictError,
        422: openai.UnprocessableEntityError,
        429: openai.RateLimitError,
    }
    kind = kinds.get(response.status)
    if kind is None:
        kind = openai.InternalServerError if response.status >= 500 else openai.APIStatusError
    return kind(message, response=reply, body=data)
