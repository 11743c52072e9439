"""A loopback OpenAI-compatible model that misbehaves on demand, for the robustness benchmark; run as its
own process: `python benchmarks/common/hostile_model.py PORT RECORD_FILE`.

It answers every memory task as `scripted_model.py` does (tasks recognised by their system prompt, marker
words `zq...mark` echoed), unless a mode says otherwise. The mode of a request is the first mode word found
in it (in the last user message of an answer, anywhere in the user messages of a memory task), else the
default set with `POST /control {"mode": ...}`:

- `zqhangmode` (answers): the request is accepted and never answered, not a byte, until the client goes;
- `zqstallmode` (answers): streamed, `dribble_pieces` pieces (the first holds `zqpartialmark`)
  `dribble_delay` seconds apart, then nothing more until the client goes (without `stream`: a hang);
- `zqdribblemode` (answers): the same pieces (the first holds `zqslowmark`) `dribble_delay` seconds apart,
  then the whole answer and a normal end;
- `zqfencemode` (fact extraction): the JSON inside a ```json fence, with prose around it;
- `zqgarblemode` (fact extraction): a reply no JSON parser can read.

Every request is appended to RECORD_FILE as one JSON line when it arrives (`{"n", "at", "kind", "mode",
"bytes", "largest", "markers", "body"}`: `bytes` the request body's size, `largest` the longest message
content in characters, `markers` every `zq...mark` word of the whole body, `body` with message contents
over 4,000 characters cut), and `{"n", "done", "disconnected"}` when its reply ended or its client went.
`GET /state` says how many requests are in flight and for how long none was; `POST /control` sets `mode`
(default `normal`), `dribble_delay` and `dribble_pieces`.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from benchmarks.common.scripted_model import (  # the same record file, state and /state
    MARK,
    chunk,
    completion,
    finished,
    kind_of,
    log,
    reply_for,
    state,
    status,
)

MODES = ("hang", "stall", "dribble", "fence", "garble")
ANSWER_MODES = ("hang", "stall", "dribble")
GARBLE = "Sorry — I can't do that right now ~~ facts => [[ user said ??? ]] (truncated"
HANG_LIMIT = 900.0  # seconds a hung request waits for its client to go, at most
CUT = 4_000

knobs: dict[str, Any] = {"mode": "normal", "dribble_delay": 1.0, "dribble_pieces": 3}


def mode_of(kind: str, messages: list[dict[str, Any]]) -> str:
    """The request's mode: a mode word in what it was asked, else the default (if it fits the task)."""
    users = [m.get("content") or "" for m in messages if m.get("role") == "user"]
    where = users[-1:] if kind == "answer" else users
    allowed = ANSWER_MODES if kind == "answer" else ("fence", "garble") if kind == "extract" else ()
    for mode in allowed:
        if any(f"zq{mode}mode" in text for text in where):
            return mode
    return knobs["mode"] if knobs["mode"] in allowed else "normal"


def cut(body: dict[str, Any]) -> dict[str, Any]:
    """The body with long message contents cut (the record stays small with a 1 MiB message)."""
    messages = []
    for m in body.get("messages", []):
        content = m.get("content")
        if isinstance(content, str) and len(content) > CUT:
            m = {**m, "content": content[:CUT] + f"... [{len(content):,} characters]"}
        messages.append(m)
    return {**body, "messages": messages}


async def until_gone(request: Request) -> bool:
    """Wait until the client disconnects (True) or HANG_LIMIT passed (False)."""
    deadline = time.monotonic() + HANG_LIMIT
    while time.monotonic() < deadline:
        if await request.is_disconnected():
            return True
        await asyncio.sleep(0.2)
    return False


async def completions(request: Request) -> Response:
    raw = await request.body()
    body = json.loads(raw)
    messages = body["messages"]
    kind = kind_of(messages)
    mode = mode_of(kind, messages)
    state["n"] += 1
    n = state["n"]
    state["inflight"] += 1
    largest = max(
        (len(m.get("content") or "") for m in messages if isinstance(m.get("content"), str)), default=0
    )
    log(
        {
            "n": n,
            "at": time.time(),
            "kind": kind,
            "mode": mode,
            "bytes": len(raw),
            "largest": largest,
            "markers": sorted(set(MARK.findall(raw.decode("utf-8", "replace")))),
            "body": cut(body),
        }
    )
    streamed = bool(body.get("stream"))
    if mode == "hang" or (mode == "stall" and not streamed):
        gone = False
        try:
            gone = await until_gone(request)
        finally:
            finished(n, disconnected=gone)
        return Response(status_code=504 if not gone else 499)
    try:
        text, calls = reply_for(kind, body)
    except BaseException:
        finished(n, disconnected=False)
        raise
    if mode == "fence" and text is not None:
        text = f"Here are the facts I found:\n\n```json\n{text}\n```\n\nLet me know if you need more."
    elif mode == "garble":
        text = GARBLE
    usage = {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}
    tool_calls = [
        {"id": f"call_{n}_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for i, (name, args) in enumerate(calls)
    ]
    if not streamed:
        finished(n, disconnected=False)
        return JSONResponse(completion(body, text, tool_calls, usage))

    async def events() -> AsyncIterator[str]:
        disconnected = True  # until the last event is sent
        try:
            yield chunk(body, {"role": "assistant"})
            if mode in ("stall", "dribble"):
                for i in range(int(knobs["dribble_pieces"])):
                    first = "partial zqpartialmark" if mode == "stall" else "slow zqslowmark"
                    yield chunk(body, {"content": f"{first} {i} " if i == 0 else f"piece {i} "})
                    await asyncio.sleep(float(knobs["dribble_delay"]))
                if mode == "stall":
                    await asyncio.sleep(HANG_LIMIT)  # cancelled when the client goes
            if text:
                half = max(1, len(text) // 2)
                for start in range(0, len(text), half):
                    yield chunk(body, {"content": text[start : start + half]})
            for i, call in enumerate(tool_calls):
                yield chunk(body, {"tool_calls": [{"index": i, **call}]})
            yield chunk(body, {}, "tool_calls" if calls else "stop")
            if (body.get("stream_options") or {}).get("include_usage"):
                yield (
                    "data: " + json.dumps({"id": "chatcmpl-hostile", "choices": [], "usage": usage}) + "\n\n"
                )
            yield "data: [DONE]\n\n"
            disconnected = False
        finally:
            finished(n, disconnected=disconnected)

    return StreamingResponse(events(), media_type="text/event-stream")


async def control(request: Request) -> Response:
    given = await request.json()
    if given.get("mode") in (*MODES, "normal"):
        knobs["mode"] = given["mode"]
    for name in ("dribble_delay", "dribble_pieces"):
        if name in given:
            knobs[name] = float(given[name])
    return JSONResponse(knobs)


app = Starlette(
    routes=[
        Route("/v1/chat/completions", completions, methods=["POST"]),
        Route("/state", status),
        Route("/control", control, methods=["POST"]),
    ]
)

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", timeout_keep_alive=75)
