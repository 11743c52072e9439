"""Argument types of the `brain` command line: ids are checked as they are parsed, so a bad `--user`,
`--chat` or `--agent` is a usage error (exit status 2) before anything is opened. Light on purpose (the
command line's grammar imports them): the id rules are imported when an id is parsed."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

__all__ = ["AGENT_ID", "CHAT_ID", "USER_ID", "text_or_file"]


def _id(what: str) -> Callable[[str], str]:
    def parse(value: str) -> str:
        from brain.errors import InputError
        from brain.keys import check_id

        try:
            return check_id(value, what)
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = what
    return parse


def text_or_file(flag: str) -> Callable[[str], str]:
    """`FILE|TEXT`: a path that exists is read, else the value is the text; empty is a usage error."""

    def parse(value: str) -> str:
        path = Path(value).expanduser()
        try:
            text = path.read_text(encoding="utf-8") if path.is_file() else value
        except (OSError, UnicodeDecodeError) as exc:
            raise argparse.ArgumentTypeError(f"cannot read {value}: {exc}") from None
        if not text.strip():
            raise argparse.ArgumentTypeError(f"{flag} is empty")
        return text.strip()

    parse.__name__ = flag
    return parse


USER_ID = _id("user id")
CHAT_ID = _id("chat id")
AGENT_ID = _id("agent name")
