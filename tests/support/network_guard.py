"""Loopback-only networking for tests, in the test process and in Python subprocesses they start."""

from __future__ import annotations

import ipaddress
import os
import socket
from typing import Any

__all__ = ["GUARD_LOG_ENV", "NetworkGuard"]

GUARD_LOG_ENV = "BRAIN_TEST_GUARD_LOG"


class NetworkGuard:
    """Refuses any connection outside loopback and remembers the attempt, so the test fails even when
    the code under test swallows the error. Name lookups of other hosts fail as they would offline."""

    def __init__(self) -> None:
        self.attempts: list[str] = []
        self._connect = socket.socket.connect
        self._connect_ex = socket.socket.connect_ex
        self._getaddrinfo = socket.getaddrinfo
        self._log: str | None = None

    def install_in_child(self) -> None:
        """For subprocesses: attempts are also appended to the file named by $BRAIN_TEST_GUARD_LOG,
        where the parent's fixture finds them."""
        self._log = os.environ.get(GUARD_LOG_ENV)
        self.install()

    @staticmethod
    def allowed(family: int, address: Any) -> bool:
        if family == getattr(socket, "AF_UNIX", None):
            return True
        host = address[0] if isinstance(address, tuple) else address
        try:
            return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
        except ValueError:
            return str(host) == "localhost"

    def install(self) -> None:
        guard = self

        def connect(sock: socket.socket, address: Any) -> None:
            guard.check(sock.family, address)
            return guard._connect(sock, address)

        def connect_ex(sock: socket.socket, address: Any) -> int:
            guard.check(sock.family, address)
            return guard._connect_ex(sock, address)

        def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
            name = host.decode() if isinstance(host, bytes) else host
            if name is not None and not _is_ip(name) and not guard.allowed(socket.AF_INET, (name, 0)):
                raise socket.gaierror(socket.EAI_NONAME, f"network guard: no lookups of {name!r} in tests")
            return guard._getaddrinfo(host, *args, **kwargs)

        socket.socket.connect = connect  # type: ignore[method-assign]
        socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
        socket.getaddrinfo = getaddrinfo

    def check(self, family: int, address: Any) -> None:
        if not self.allowed(family, address):
            self.attempts.append(repr(address))
            if self._log:
                with open(self._log, "a") as f:
                    f.write(f"pid {os.getpid()}: {address!r}\n")
            raise ConnectionRefusedError(f"network guard: connection to {address!r} outside loopback")


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name.split("%")[0])
    except ValueError:
        return False
    return True
