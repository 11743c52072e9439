"""A scripted OpenAI-compatible HTTP server on loopback, for tests of the real client path.

Each request takes the next reply from the script. Running out of replies, or leaving some unused,
makes `verify()` fail; the `openai_server` fixture calls it at teardown. Every request is recorded.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "Chat",
    "Dynamic",
    "Embeddings",
    "Fault",
    "Malformed",
    "Models",
    "Payload",
    "Ranked",
    "Recorded",
    "ScriptedOpenAIServer",
    "Slow",
]


@dataclass(frozen=True)
class Chat:
    """A chat completion; streamed as SSE when the request asks for a stream."""

    content: str | None = "ok"
    tool_calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    usage: tuple[int, int] | None = (10, 5)
    finish_reason: str = "stop"
    chunks: tuple[str, ...] | None = None  # how to split `content` when streaming; default by word
    chunk_delay: float = 0.0  # seconds between streamed chunks


@dataclass(frozen=True)
class Embeddings:
    vectors: tuple[tuple[float, ...], ...]
    prompt_tokens: int | None = 8


@dataclass(frozen=True)
class Ranked:
    """A `/rerank` reply: one score per document, sent best first (as rerank servers do), with indexes."""

    scores: tuple[float, ...]
    total_tokens: int | None = 12


@dataclass(frozen=True)
class Payload:
    """A 200 with exactly this JSON body (e.g. a reply of the wrong shape)."""

    body: dict[str, Any]


@dataclass(frozen=True)
class Models:
    ids: tuple[str, ...] = ("gpt-4o-mini",)


@dataclass(frozen=True)
class Fault:
    """An HTTP error status, e.g. 500, or 429 with `{"Retry-After": "1"}`."""

    status: int = 500
    headers: dict[str, str] = field(default_factory=dict)
    message: str = "scripted fault"


@dataclass(frozen=True)
class Malformed:
    """A 200 whose body is not valid JSON."""

    body: bytes = b'{"id": "x", "choices": [ {"broken'


@dataclass(frozen=True)
class Dynamic:
    """A reply computed from the request body (e.g. a summarizer that obeys the limit it is given)."""

    reply: Callable[[dict[str, Any]], Reply]


@dataclass(frozen=True)
class Slow:
    """Wait `delay` seconds, then send `reply` (a client with a shorter timeout gives up first)."""

    delay: float
    reply: Chat | Embeddings | Ranked | Payload | Models | Fault | Malformed


Reply = Chat | Embeddings | Ranked | Payload | Models | Fault | Malformed | Slow | Dynamic


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float


class ScriptedOpenAIServer:
    """Serves `/v1/chat/completions`, `/v1/embeddings`, `/v1/rerank` and `/v1/models` from a script."""

    def __init__(self) -> None:
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self.requests: list[Recorded] = []
        self.errors: list[str] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="scripted-openai", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> ScriptedOpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def chat_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def take_unused(self) -> int:
        """Drop the replies nobody asked for and say how many there were (for scripts padded on purpose)."""
        with self._lock:
            count = len(self._script)
            self._script.clear()
        return count

    def verify(self) -> None:
        """Fail if a request found the script empty, or replies were left unused."""
        problems = list(self.errors)
        if self._script:
            problems.append(
                f"{len(self._script)} scripted replies were never requested: {list(self._script)!r}"
            )
        if problems:
            raise AssertionError("scripted OpenAI server: " + "; ".join(problems))

    def _next(self, request: Recorded) -> Reply | None:
        with self._lock:
            self.requests.append(request)
            if not self._script:
                self.errors.append(
                    f"request #{len(self.requests)} {request.method} {request.path} found the script empty"
                )
                return None
            return self._script.popleft()


def _handler_for(server: ScriptedOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # as real servers do: no 40 ms waits for delayed ACKs

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self._serve({})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                body = {"_unparsed": raw.decode(errors="replace")}
            self._serve(body)

        def _serve(self, body: dict[str, Any]) -> None:
            record = Recorded(
                self.command,
                self.path,
                {k.lower(): v for k, v in self.headers.items()},
                body,
                time.monotonic(),
            )
            reply = server._next(record)
            try:
                if reply is None:
                    self._json(500, {"error": {"message": "script exhausted"}}, {"x-should-retry": "false"})
                    return
                self._send(reply, body)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def _send(self, reply: Reply, body: dict[str, Any]) -> None:
            if isinstance(reply, Dynamic):
                self._send(reply.reply(body), body)
            elif isinstance(reply, Slow):
                time.sleep(reply.delay)
                self._send(reply.reply, body)
            elif isinstance(reply, Fault):
                self._json(
                    reply.status, {"error": {"message": reply.message, "type": "scripted"}}, reply.headers
                )
            elif isinstance(reply, Payload):
                self._json(200, reply.body)
            elif isinstance(reply, Ranked):
                order = sorted(range(len(reply.scores)), key=lambda i: -reply.scores[i])
                ranked: dict[str, Any] = {
                    "model": body.get("model", ""),
                    "results": [{"index": i, "relevance_score": reply.scores[i]} for i in order],
                }
                if reply.total_tokens is not None:
                    ranked["usage"] = {"total_tokens": reply.total_tokens}
                self._json(200, ranked)
            elif isinstance(reply, Malformed):
                self._raw(200, reply.body, "application/json")
            elif isinstance(reply, Models):
                self._json(
                    200,
                    {
                        "object": "list",
                        "data": [
                            {"id": i, "object": "model", "created": 0, "owned_by": "scripted"}
                            for i in reply.ids
                        ],
                    },
                )
            elif isinstance(reply, Embeddings):
                data = [
                    {"object": "embedding", "index": i, "embedding": list(v)}
                    for i, v in enumerate(reply.vectors)
                ]
                payload: dict[str, Any] = {"object": "list", "data": data, "model": body.get("model", "")}
                if reply.prompt_tokens is not None:
                    payload["usage"] = {
                        "prompt_tokens": reply.prompt_tokens,
                        "total_tokens": reply.prompt_tokens,
                    }
                self._json(200, payload)
            elif body.get("stream"):
                self._stream(reply, body)
            else:
                self._json(200, _completion(reply, body))

        def _stream(self, reply: Chat, body: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            base = {
                "id": "chatcmpl-scripted",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": body.get("model", ""),
            }
            pieces = reply.chunks if reply.chunks is not None else _words(reply.content or "")
            self._event(
                {**base, "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]}
            )
            for piece in pieces:
                self._event(
                    {**base, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
                )
                time.sleep(reply.chunk_delay)
            for i, (name, args) in enumerate(reply.tool_calls):
                text = json.dumps(args)
                first = {"index": i, "id": f"call_{i}", "type": "function", "function": {"name": name}}
                rest = [
                    {"index": i, "function": {"arguments": text[j : j + 7]}} for j in range(0, len(text), 7)
                ]
                for delta in (first, *rest):
                    self._event(
                        {
                            **base,
                            "choices": [
                                {"index": 0, "delta": {"tool_calls": [delta]}, "finish_reason": None}
                            ],
                        }
                    )
            self._event(
                {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": reply.finish_reason}]}
            )
            if reply.usage is not None and (body.get("stream_options") or {}).get("include_usage"):
                self._event({**base, "choices": [], "usage": _usage(reply.usage)})
            self._chunk(b"data: [DONE]\n\n")
            self._chunk(b"")

        def _event(self, payload: dict[str, Any]) -> None:
            self._chunk(b"data: " + json.dumps(payload).encode() + b"\n\n")

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            self._raw(status, json.dumps(payload).encode(), "application/json", headers)

        def _raw(self, status: int, data: bytes, ctype: str, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()

    return Handler


def _words(text: str) -> tuple[str, ...]:
    pieces = text.split(" ")
    return tuple(p if i == len(pieces) - 1 else p + " " for i, p in enumerate(pieces)) if text else ()


def _usage(usage: tuple[int, int]) -> dict[str, int]:
    return {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}


def _completion(reply: Chat, body: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, (n, a) in enumerate(reply.tool_calls)
        ]
    payload: dict[str, Any] = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", ""),
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
    }
    if reply.usage is not None:
        payload["usage"] = _usage(reply.usage)
    return payload
