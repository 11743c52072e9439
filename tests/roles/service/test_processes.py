"""`brain keys` and two `brain serve` processes on one Redis, as users run them: same answers from either,
one revocation and one rate limit for both."""

from __future__ import annotations

import asyncio
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
import redis

from tests.support.openai_server import Chat, ScriptedOpenAIServer
from tests.support.serving import to_a_fresh_window, wait_ready

BRAIN = str(Path(sys.executable).parent / "brain")


@pytest.fixture
def env(redis_server_url: str, openai_server: ScriptedOpenAIServer) -> dict[str, str]:
    with redis.Redis.from_url(redis_server_url) as client:
        client.flushdb()
    return {
        **os.environ,
        "OPENAI_BASE_URL": openai_server.url,
        "OPENAI_API_KEY": "sk-test",
        "BRAIN_REDIS_URL": redis_server_url,
    }


SETTINGS = ("--set", "serve.rate_limit=6", "--set", "memory.facts.in_process_worker=false")


def brain(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([BRAIN, *args], capture_output=True, text=True, timeout=60, env=env)


@pytest.fixture
def two_servers(env: dict[str, str]) -> Iterator[list[str]]:
    processes = [
        subprocess.Popen(
            [BRAIN, "serve", "--port", "0", *SETTINGS],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    try:
        urls = []
        for process in processes:
            assert process.stdout is not None
            line = process.stdout.readline()
            assert line.startswith("brain serve: http://127.0.0.1:"), line + (
                process.stderr.read() if process.stderr else ""
            )
            urls.append(line.split()[2])
        yield urls
    finally:
        for process in processes:
            process.send_signal(signal.SIGINT)
        for process in processes:
            _, errors = process.communicate(timeout=20)
            assert process.returncode == 0 and "Traceback" not in errors, errors
            assert "brain serve: stopped" in errors


async def test_two_servers_on_one_redis_give_the_same_answers(
    two_servers: list[str], env: dict[str, str], openai_server: ScriptedOpenAIServer
) -> None:
    created = brain("keys", "create", "--user", "ann", "--name", "laptop", *SETTINGS, env=env)
    assert created.returncode == 0, created.stderr
    secret = created.stdout.strip()
    assert secret.startswith("bk_") and "shown once" in created.stderr
    listed = brain("keys", "list", "--user", "ann", env=env)
    assert secret not in listed.stdout and "user=ann" in listed.stdout and "active (laptop)" in listed.stdout
    a, b = two_servers
    for url in two_servers:
        await wait_ready(url, 200)
    openai_server.script(Chat("Hello Ann."), Chat("You said you are Ann."))
    headers = {"Authorization": f"Bearer {secret}"}
    await asyncio.sleep(to_a_fresh_window())  # the requests below count in one rate window
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        added = await http.post(f"{a}/v1/memories", json={"text": "Ann lives in Lisbon", "infer": False})
        memory_id = added.json()["fact"]["id"]
        assert (await http.get(f"{b}/v1/memories/{memory_id}")).json()["text"] == "Ann lives in Lisbon"
        one = {"chat_id": "c", "text": "I am Ann", "stream": False}
        assert (await http.post(f"{a}/v1/chat", json=one)).json()["text"] == "Hello Ann."
        two = {"chat_id": "c", "text": "Who am I?", "stream": False}
        assert (await http.post(f"{b}/v1/chat", json=two)).json()["text"] == "You said you are Ann."
        second_prompt = openai_server.chat_requests()[1].body["messages"]
        assert [m["content"] for m in second_prompt[1:]] == ["I am Ann", "Hello Ann.", "Who am I?"]
        assert (await http.get(f"{a}/v1/chats/c")).json() == (await http.get(f"{b}/v1/chats/c")).json()
        # one rate limit across both servers: 6 requests so far, then refused on either
        assert (await http.get(f"{a}/v1/me")).status_code == 429
        assert (await http.get(f"{b}/v1/me")).status_code == 429
    key_id = secret.split("_")[1]
    revoked = brain("keys", "revoke", key_id, env=env)
    assert revoked.returncode == 0 and f"revoked {key_id}" in revoked.stdout
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        assert [(await http.get(f"{url}/v1/me")).status_code for url in two_servers] == [401, 401]
    assert "revoked" in brain("keys", "list", env=env).stdout


@pytest.mark.serial
def test_a_small_keep_alive_request_is_answered_without_a_nagle_stall(two_servers: list[str]) -> None:
    url = two_servers[0]
    asyncio.run(wait_ready(url, 200))
    with httpx2.Client(timeout=5) as http:  # one keep-alive connection
        http.get(f"{url}/healthz")
        took = []
        for _ in range(40):
            started = time.perf_counter()
            assert http.get(f"{url}/healthz").status_code == 200
            took.append(time.perf_counter() - started)
    # with Nagle on the served socket each answer waited ~40 ms for the client's delayed ACK
    assert statistics.median(took) < 0.02, statistics.median(took)
