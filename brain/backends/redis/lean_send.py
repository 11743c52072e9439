"""`LeanConnection`: redis-py's TCP connection, whose commands are sent without a task of their own and
packed in one pass.

redis-py sends every command under `asyncio.wait_for(..., socket_timeout)`, which makes a task and a timer
for a write that nearly always leaves at once (a small command on an idle socket). Here the command is
written first; only when the transport could not send all of it (its buffer holds some, so a drain may
have to wait for room) is the wait bounded by `socket_timeout`, as redis-py bounds it. Everything else
(health checks, connecting, failures and what they become) is redis-py's: its errors are raised the same,
and a connection that failed mid-write is closed, as redis-py closes it.

A command's bytes are the ones redis-py's `pack_command` makes, built in one buffer by hiredis's packer (C; a
third of the time of one written in Python): for arguments of the types redis-py writes as they are (text,
bytes, whole numbers, floats as their `repr`) under UTF-8. Anything else (a bool or None, which redis-py
refuses; another type; a large argument, which redis-py sends in pieces to avoid copying it) is packed by
redis-py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

import hiredis
from redis.asyncio.connection import Connection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = ["LeanConnection"]

_PLAIN = frozenset({str, bytes, int, float})
"""What hiredis packs as redis-py does (exactly these types: a bool is an int that redis-py refuses)."""


class LeanConnection(Connection):
    """A TCP connection whose writes that need no waiting cost no task (see the module)."""

    def pack_command(self, *args: Any) -> list[bytes]:
        first = args[0]  # a command of two words (SCRIPT LOAD) is cut as redis-py cuts it
        if type(first) is str:
            words = first.split()
            if len(words) != 1:
                args = (*words, *args[1:])
        elif type(first) is bytes and b" " in first:
            args = (*first.split(), *args[1:])
        encoder = self.encoder
        if (
            _PLAIN.issuperset(map(type, args))
            and encoder.encoding == "utf-8"
            and encoder.encoding_errors == "strict"
        ):
            packed: bytes = hiredis.pack_command(args)
            if len(packed) <= self._buffer_cutoff:
                return [packed]
        return super().pack_command(*args)

    async def send_packed_command(
        self, command: bytes | str | Iterable[bytes], check_health: bool = True
    ) -> None:
        if not self.is_connected or not self.socket_timeout:
            await super().send_packed_command(command, check_health)
            return
        if check_health:
            await self.check_health()  # type: ignore[no-untyped-call]
        writer = self._writer
        if writer is None or writer.transport.get_write_buffer_size():  # reconnected, or bytes still queued
            await super().send_packed_command(command, False)
            return
        try:
            if isinstance(command, str):
                command = command.encode()
            writer.writelines([command] if isinstance(command, bytes) else command)
            if writer.transport.get_write_buffer_size():  # not all sent: room is waited for, bounded
                await asyncio.wait_for(writer.drain(), self.socket_timeout)
            else:  # all sent: never waits, only raises for a connection lost
                await writer.drain()
        except TimeoutError:
            await self.disconnect(nowait=True)
            raise RedisTimeoutError("Timeout writing to socket") from None
        except OSError as e:
            await self.disconnect(nowait=True)
            err_no, errmsg = ("UNKNOWN", e.args[0]) if len(e.args) == 1 else (e.args[0], e.args[1])
            raise RedisConnectionError(f"Error {err_no} while writing to socket. {errmsg}.") from e
        except BaseException:
            await self.disconnect(nowait=True)
            raise
