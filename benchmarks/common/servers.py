"""A local Redis for benchmarks: Debian's redis-server when installed, else the embedded Valkey."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import redis

from brain.backends.redis.embedded import EmbeddedValkey, server_binary


@contextlib.contextmanager
def local_redis(io_threads: int = 1) -> Iterator[tuple[str, str]]:
    """Yields (url, description); the server is private to the benchmark and removed afterwards.
    `io_threads` > 1 asks the server for that many I/O threads (a many-core load)."""
    with tempfile.TemporaryDirectory(prefix="brain-bench-") as tmp:
        binary = shutil.which("redis-server")
        if binary is None and io_threads > 1:  # the embedded Valkey's own binary, run as a plain server
            binary = str(server_binary())
        if binary is None:
            embedded = EmbeddedValkey(Path(tmp))
            try:
                yield embedded.start(), "embedded Valkey (appendonly, fsync everysec)"
            finally:
                embedded.stop()
            return
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        process = subprocess.Popen(
            [
                binary,
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--dir",
                tmp,
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "everysec",
                *(["--io-threads", str(io_threads)] if io_threads > 1 else []),
            ],
            stdout=subprocess.DEVNULL,
        )
        try:
            for _ in range(200):
                try:
                    with redis.Redis(port=port) as client:
                        client.ping()
                    break
                except redis.ConnectionError:
                    time.sleep(0.05)
            version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.split()
            threads = f", {io_threads} I/O threads" if io_threads > 1 else ""
            described = f"{version[0].lower()}-server {version[2]} (appendonly, fsync everysec{threads})"
            yield f"redis://127.0.0.1:{port}/0", described
        finally:
            process.terminate()
            process.wait()
