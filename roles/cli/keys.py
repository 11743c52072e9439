"""`brain keys`: create, list and revoke the API keys that reach the service. Apart from `brain serve`'s
module, so that managing a key loads neither the HTTP server nor the assistant."""

from __future__ import annotations

import argparse
import sys

from brain.runtime import open_runtime
from brain.settings import Settings
from roles.cli.shown import shown_date

__all__ = ["keys_command"]


async def keys_command(settings: Settings, args: argparse.Namespace) -> int:
    async with open_runtime(settings, defer_model=True) as runtime:
        assert runtime.tiers is not None
        keys = runtime.tiers.backend.api_keys
        if args.keys_command == "create":
            key, secret = await keys.create(args.user, agent=args.agent, name=args.name)
            print(secret)
            agent = f" as agent {key.agent!r}" if key.agent else ""
            print(f"key {key.id} for user {key.user!r}{agent}: shown once, keep it secret", file=sys.stderr)
        elif args.keys_command == "list":
            found = await keys.list(args.user)
            for key in found:
                state = "active" if key.active else f"revoked {shown_date(key.revoked_at)}"
                agent = f" agent={key.agent}" if key.agent else ""
                note = f" ({key.name})" if key.name else ""
                print(
                    f"{key.id}  user={key.user}{agent}  created {shown_date(key.created_at)}  {state}{note}"
                )
            print(f"{len(found)} key(s)", file=sys.stderr)
        else:
            key = await keys.revoke(args.id)
            print(f"revoked {key.id} (user {key.user!r}) on {shown_date(key.revoked_at)}")
    return 0
