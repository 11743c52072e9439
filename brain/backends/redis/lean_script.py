"""`LeanScript`: a registered script whose call on a standalone client goes straight to EVALSHA.

redis-py's script call imports its pipeline class and checks the client against it (a slow `isinstance`: the
class is a typing Protocol's) before every call, then goes through `evalsha` and `_evalsha`. Here a call on
the client the script was made for, of exactly its class, sends EVALSHA itself, and on `NOSCRIPT` loads the
script and sends it again, as redis-py does; any other client (a pipeline, another class) gets redis-py's own
call.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError

__all__ = ["LeanScript"]


class LeanScript(AsyncScript):
    """A script registered on a standalone client (see the module)."""

    async def __call__(
        self, keys: Sequence[Any] | None = None, args: Iterable[Any] | None = None, client: Any = None
    ) -> Any:
        registered = self.registered_client
        if client is not None and type(client) is not type(registered):
            return await super().__call__(keys, args, client)
        target = registered if client is None else client
        keys = keys or ()
        flat = (*keys, *args) if args else tuple(keys)
        try:
            return await target.execute_command("EVALSHA", self.sha, len(keys), *flat)
        except NoScriptError:  # a server that lost its scripts (restarted, flushed, another node)
            self.sha = await target.script_load(self.script)
            return await target.execute_command("EVALSHA", self.sha, len(keys), *flat)
