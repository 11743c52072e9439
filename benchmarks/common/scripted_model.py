"""A loopback OpenAI-compatible model for the trust benchmark, run as its own process:
`python benchmarks/common/scripted_model.py PORT RECORD_FILE`.

It recognises each memory task of brain-assistant by its system prompt and answers it from the request
alone, echoing every marker word (`zq...mark`) it was shown, so that whatever memory a prompt held shows up
in what gets stored and answered:

- fact extraction: one fact per marked user message, verbatim (the rolling summary too, when asked to
  fold), sent after `extract_delay` seconds; reconciliation: ADD every new fact;
- summaries: the marked user messages and summary so far, verbatim; titles, follow-up checks: trivial;
- answers: with the core-memory tools offered and a user turn saying "please remember" (or holding a
  hostile marker `zqh<n>mark`), first a `core_memory_append` of the whole turn (label `persona` when it
  says "persona note", else `human`); otherwise "Noted <every marker in the prompt>.", streamed in
  `chunks` pieces `chunk_delay` seconds apart.

Every request is appended to RECORD_FILE as one JSON line (`{"n", "at", "kind", "body"}`) when it arrives,
and `{"n", "done"}` when its reply was sent. `GET /state` says how many are in flight and for how long
none was; `POST /control` sets `extract_delay`, `chunk_delay` and `chunks`.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

MARK = re.compile(r"zq[a-z0-9]+?mark")
HOSTILE = re.compile(r"zqh\d+mark")
NUMBERED = re.compile(r"^(\d+): (.*?)(?=\n\d+: |\Z)", re.MULTILINE | re.DOTALL)  # a fact may span lines
SPEAKER = re.compile(r"^([A-Z][a-z]+): ")  # "User: ", "Lily: "; not "SYSTEM:" or "### System:"
KINDS = (
    ("You keep an assistant's memory of facts", "extract"),
    ("You maintain a memory of facts", "reconcile"),
    ("You condense conversation transcripts", "summarize"),
    ("Give this conversation a title", "title"),
    ("You judge whether a new message", "related"),
    ("Decide whether the new message depends", "relate_rewrite"),
    ("Rewrite the new message", "rewrite"),
)

knobs: dict[str, float] = {"extract_delay": 0.0, "chunk_delay": 0.0, "chunks": 2}
state: dict[str, Any] = {"inflight": 0, "last": time.monotonic(), "n": 0}
record = Path(sys.argv[2]) if len(sys.argv) > 2 else None


def log(entry: dict[str, Any]) -> None:
    if record is not None:
        with record.open("a", encoding="utf-8") as out:
            out.write(json.dumps(entry, ensure_ascii=False) + "\n")


def kind_of(messages: list[dict[str, Any]]) -> str:
    first = next((m.get("content") or "" for m in messages if m.get("role") == "system"), "")
    return next((kind for head, kind in KINDS if first.startswith(head)), "answer")


def marked_lines(text: str, summary: bool = False) -> list[str]:
    """The user's messages of a transcript (`Speaker: text` lines, a message may span lines) that hold a
    marker, in full; the assistant's are left out. With `summary`, the summary so far (unlabelled) too."""
    messages: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        start = SPEAKER.match(line)
        if start or not messages:
            messages.append((start.group(1) if start else "", [line[start.end() :] if start else line]))
            messages[-1][1][0] = messages[-1][1][0].removeprefix("Summary so far: ")
        else:
            messages[-1][1].append(line)
    found = ["\n".join(lines) for who, lines in messages if who == "User" or (summary and not who)]
    return [m for m in found if MARK.search(m)]


def reply_for(kind: str, body: dict[str, Any]) -> tuple[str | None, list[tuple[str, dict[str, Any]]]]:
    """The reply's text and tool calls."""
    messages = body["messages"]
    user = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "user"), "")
    if kind == "extract":
        turns, _, fold = user.partition("\n\nSUMMARIZE:\n")
        facts = [{"text": line, "category": "misc", "valid_at": None} for line in marked_lines(turns)]
        data: dict[str, Any] = {"facts": facts}
        if "SUMMARIZE:" in user:
            data["summary"] = "\n".join(marked_lines(fold, summary=True)) or "The user chatted."
        return json.dumps(data, ensure_ascii=False), []
    if kind == "reconcile":
        items = NUMBERED.findall(user.partition("NEW facts:\n")[2])
        decisions = [{"event": "ADD", "id": None, "text": text, "new": int(i)} for i, text in items]
        return json.dumps({"memory": decisions}, ensure_ascii=False), []
    if kind == "summarize":
        return "\n".join(marked_lines(user, summary=True)) or "The user chatted.", []
    if kind == "title":
        return "A chat", []
    if kind == "related":
        return "FALSE", []
    if kind == "relate_rewrite":
        return json.dumps({"related": False, "rewritten": None}), []
    if kind == "rewrite":
        return user.rpartition("## New message\n")[2] or user, []
    tools = {t["function"]["name"] for t in body.get("tools") or []}
    last_user = max(i for i, m in enumerate(messages) if m.get("role") == "user")
    acted = any(m.get("role") == "tool" for m in messages[last_user:])
    if "core_memory_append" in tools and not acted and ("please remember" in user or HOSTILE.search(user)):
        label = "persona" if "persona note" in user else "human"
        return None, [("core_memory_append", {"label": label, "content": user, "request_heartbeat": False})]
    every = " ".join(m.get("content") or "" for m in messages)
    return "Noted " + " ".join(sorted(set(MARK.findall(every)))) + ".", []


def chunk(body: dict[str, Any], delta: dict[str, Any], finish: str | None = None) -> str:
    payload = {
        "id": "chatcmpl-trust",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": body.get("model", ""),
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return "data: " + json.dumps(payload, ensure_ascii=False) + "\n\n"


def completion(
    body: dict[str, Any], text: str | None, tool_calls: list[dict[str, Any]], usage: dict[str, int]
) -> dict[str, Any]:
    """A whole (not streamed) chat completion answering `body`."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", ""),
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}
        ],
        "usage": usage,
    }


async def completions(request: Request) -> Response:
    body = await request.json()
    kind = kind_of(body["messages"])
    state["n"] += 1
    n = state["n"]
    state["inflight"] += 1
    log({"n": n, "at": time.time(), "kind": kind, "body": body})
    try:
        if kind == "extract" and knobs["extract_delay"]:
            await asyncio.sleep(knobs["extract_delay"])
        text, calls = reply_for(kind, body)
    except BaseException:
        finished(n)
        raise
    usage = {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}
    tool_calls = [
        {"id": f"call_{n}_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for i, (name, args) in enumerate(calls)
    ]
    if not body.get("stream"):
        finished(n)
        return JSONResponse(completion(body, text, tool_calls, usage))

    async def events() -> AsyncIterator[str]:
        try:
            yield chunk(body, {"role": "assistant"})
            if text:
                size = max(1, -(-len(text) // int(knobs["chunks"])))
                for start in range(0, len(text), size):
                    yield chunk(body, {"content": text[start : start + size]})
                    await asyncio.sleep(knobs["chunk_delay"])
            for i, call in enumerate(tool_calls):
                yield chunk(body, {"tool_calls": [{"index": i, **call}]})
            yield chunk(body, {}, "tool_calls" if calls else "stop")
            if (body.get("stream_options") or {}).get("include_usage"):
                yield "data: " + json.dumps({"id": "chatcmpl-trust", "choices": [], "usage": usage}) + "\n\n"
            yield "data: [DONE]\n\n"
        finally:
            finished(n)

    return StreamingResponse(events(), media_type="text/event-stream")


def finished(n: int, **more: Any) -> None:
    """Request `n`'s reply ended (`more`: what else its record line says)."""
    state["inflight"] -= 1
    state["last"] = time.monotonic()
    log({"n": n, "done": time.time(), **more})


async def status(request: Request) -> Response:
    idle = 0.0 if state["inflight"] else time.monotonic() - state["last"]
    return JSONResponse({"inflight": state["inflight"], "idle_for": idle, "requests": state["n"]})


async def control(request: Request) -> Response:
    knobs.update({k: float(v) for k, v in (await request.json()).items() if k in knobs})
    return JSONResponse(knobs)


app = Starlette(
    routes=[
        Route("/v1/chat/completions", completions, methods=["POST"]),
        Route("/state", status),
        Route("/control", control, methods=["POST"]),
    ]
)

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
