"""Argument types of the `brain` command line: ids are checked as they are parsed, so a bad `--user`,
`--chat` or `--agent` is a usage error (exit status 2) before anything is opened."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from brain.errors import InputError
from brain.keys import check_id

__all__ = ["AGENT_ID", "CHAT_ID", "USER_ID"]


def _id(what: str) -> Callable[[str], str]:
    def parse(value: str) -> str:
        try:
            return check_id(value, what)
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = what
    return parse


USER_ID = _id("user id")
CHAT_ID = _id("chat id")
AGENT_ID = _id("agent name")
