"""The test infrastructure itself: the guard and the scripted server must be able to fail."""

from __future__ import annotations

import socket

import openai
import pytest

from tests.support.network_guard import NetworkGuard
from tests.support.openai_server import Chat, ScriptedOpenAIServer


def test_guard_refuses_and_records_a_connection_outside_loopback(network_guard: NetworkGuard) -> None:
    with socket.socket() as sock, pytest.raises(ConnectionRefusedError, match="outside loopback"):
        sock.connect(("192.0.2.1", 9))  # TEST-NET-1: refused before any packet leaves
    assert network_guard.attempts[-1] == "('192.0.2.1', 9)"
    network_guard.attempts.pop()  # this test's attempt was the point of the test


def test_guard_allows_loopback_and_refuses_outside_lookups() -> None:
    assert NetworkGuard.allowed(socket.AF_INET, ("127.0.0.5", 1))
    assert NetworkGuard.allowed(socket.AF_INET6, ("::1", 1, 0, 0))
    assert not NetworkGuard.allowed(socket.AF_INET6, ("2001:db8::1", 1, 0, 0))
    with pytest.raises(socket.gaierror):
        socket.getaddrinfo("api.openai.com", 443)


async def test_scripted_server_fails_when_script_runs_out() -> None:
    server = ScriptedOpenAIServer().start()
    client = openai.AsyncOpenAI(api_key="k", base_url=server.url, max_retries=0)
    with pytest.raises(openai.InternalServerError):
        await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    await client.close()
    server.stop()
    with pytest.raises(AssertionError, match="found the script empty"):
        server.verify()


def test_scripted_server_fails_when_replies_are_left() -> None:
    server = ScriptedOpenAIServer().start()
    server.script(Chat("never asked"))
    server.stop()
    with pytest.raises(AssertionError, match="never requested"):
        server.verify()


def test_subprocesses_are_guarded_too(network_guard: NetworkGuard) -> None:
    import subprocess
    import sys

    code = (
        "import socket\ntry:\n    socket.create_connection(('192.0.2.1', 9), timeout=1)\n"
        "except OSError as e:\n    print(e)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "network guard" in out
    import os
    from pathlib import Path

    from tests.support.network_guard import GUARD_LOG_ENV

    log = Path(os.environ[GUARD_LOG_ENV])
    assert "192.0.2.1" in log.read_text()
    log.unlink()  # the attempt was the point of this test
