"""The `brain` command line's grammar: every command, action and option, and nothing they run. It imports
only argparse and the light argument types, so `brain --version`, `--help` and usage errors answer before
the library is loaded (the commands import what they need; `roles.cli.dispatch`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from brain import __version__
from roles.cli.args import AGENT_ID, CHAT_ID, USER_ID, text_or_file

__all__ = ["build_parser"]

if TYPE_CHECKING:
    _Commands = argparse._SubParsersAction[argparse.ArgumentParser]


def build_parser() -> argparse.ArgumentParser:
    """The `brain` parser. Pure: no setting is read, nothing is imported beyond argparse."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", metavar="FILE", default=argparse.SUPPRESS, help="settings YAML file")
    common.add_argument(
        "--set",
        metavar="KEY=VALUE",
        action="append",
        default=argparse.SUPPRESS,
        help="override one setting, e.g. --set llm.model=gpt-4o (repeatable)",
    )
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    parser = argparse.ArgumentParser(
        prog="brain", description="LLM assistants that remember.", parents=[common]
    )
    parser.add_argument("--version", action="version", version=f"brain-assistant {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    config = commands.add_parser("config", help="show or check the settings", parents=[common])
    config_commands = config.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    config_commands.add_parser("show", help="effective settings and where each came from", parents=[common])
    config_commands.add_parser("check", help="validate, ping Redis and the LLM endpoint", parents=[common])
    chat = commands.add_parser("chat", help="chat with the assistant", parents=[common])
    chat.add_argument("--user", type=USER_ID, default="local", help="user id (default: local)")
    chat.add_argument("--chat", type=CHAT_ID, default="default", help="chat id (default: default)")
    _add_persona_arguments(chat)
    memory = commands.add_parser("memory", help="export, import or delete a chat's memory", parents=[common])
    memory_commands = memory.add_subparsers(dest="memory_command", metavar="ACTION", required=True)
    _add_memory_commands(memory_commands, common)
    _add_archive_commands(memory_commands, common)
    _add_retain_command(memory_commands, common)
    _add_fact_commands(memory_commands, common)
    _add_graph_command(memory_commands, common)
    agent = commands.add_parser("agent", help="export or import a whole agent", parents=[common])
    agent_commands = agent.add_subparsers(dest="agent_command", metavar="ACTION", required=True)
    for name in ("export", "import"):
        sub = agent_commands.add_parser(name, help=f"{name} an agent file", parents=[common])
        sub.add_argument("file", help="the agent file (JSON)")
        sub.add_argument(
            "--user", type=USER_ID, default=None, help="user id (default: local, or the file's on import)"
        )
        sub.add_argument(
            "--chat", type=CHAT_ID, default=None, help="chat id (default: default, or the file's on import)"
        )
    _add_worker_command(commands, common)
    _add_service_commands(commands, common)
    run = commands.add_parser("run", help="run a YAML deployment", parents=[common])
    run.add_argument("deployment", help="deployment YAML, e.g. config/writer-reviewer.yaml")
    run.add_argument("--dry-run", action="store_true", help="validate and print the plan only")
    return parser


def _add_persona_arguments(chat: argparse.ArgumentParser) -> None:
    where = "(memory.mode tiered: its core block; other modes: this run's system prompt)"
    chat.add_argument(
        "--persona", metavar="FILE|TEXT", type=text_or_file("--persona"), help=f"who the agent is {where}"
    )
    chat.add_argument(
        "--human",
        metavar="FILE|TEXT",
        type=text_or_file("--human"),
        help=f"what it knows of the user {where}",
    )
    chat.add_argument(
        "--update-persona",
        action="store_true",
        help="replace the stored persona and human of an existing agent with --persona and --human",
    )


def _add_memory_commands(memory_commands: _Commands, common: argparse.ArgumentParser) -> None:
    load = memory_commands.add_parser("load", help="load documents into archival memory", parents=[common])
    load.add_argument("files", nargs="+", metavar="FILE", help="text or Markdown files")
    load.add_argument("--user", type=USER_ID, default="local", help="whose archival memory (default: local)")
    for name, text in (
        ("export", "write the chat as JSON"),
        ("import", "load a chat from JSON"),
        ("backfill", "load a conversation held elsewhere (JSON Lines of messages with their times)"),
        ("delete", "delete a chat in every memory tier, or everything of a user"),
    ):
        sub = memory_commands.add_parser(name, help=text, parents=[common])
        sub.add_argument("--user", type=USER_ID, required=True)
        if name == "delete":
            sub.add_argument(
                "--chat", type=CHAT_ID, help="the chat to delete; without it, everything of the user"
            )
        else:
            sub.add_argument("--chat", type=CHAT_ID, required=True)
        if name == "export":
            sub.add_argument("--file", help="write here instead of standard output")
        elif name == "import":
            sub.add_argument("file", help="a file written by export")
        elif name == "backfill":
            sub.add_argument(
                "file",
                help='one message per line, oldest first: {"role": "user", "content": "...", '
                '"created_at": "2025-01-07T09:30:00Z"}',
            )
        else:
            sub.add_argument("--yes", action="store_true", help="really delete")
    stats = memory_commands.add_parser(
        "stats", help="keys and bytes per kind of memory, for a user or in all", parents=[common]
    )
    stats.add_argument("--user", type=USER_ID, help="one user's memory (default: everything)")
    memory_commands.add_parser(
        "compact",
        help="rewrite the store's append-only file now, so that what was erased is gone from disk too",
        parents=[common],
    )


def _add_archive_commands(memory_commands: _Commands, common: argparse.ArgumentParser) -> None:
    archive = memory_commands.add_parser(
        "archive", help="move users idle for N days out of Redis into the cold archive", parents=[common]
    )
    archive.add_argument("--idle-days", type=float, required=True, metavar="N", help="idle at least N days")
    archive.add_argument("--dry-run", action="store_true", help="list the idle users only")
    restore = memory_commands.add_parser(
        "restore", help="bring a user back from the cold archive now", parents=[common]
    )
    restore.add_argument("--user", type=USER_ID, required=True)


def _add_retain_command(memory_commands: _Commands, common: argparse.ArgumentParser) -> None:
    retain_parser = memory_commands.add_parser(
        "retain",
        help="drop the raw text of old turns the summary and facts already hold (memory.retention)",
        parents=[common],
    )
    retain_parser.add_argument("--user", type=USER_ID, help="one user's chats (default: every chat)")
    retain_parser.add_argument("--dry-run", action="store_true", help="show what would be dropped only")


def _add_fact_commands(memory_commands: _Commands, common: argparse.ArgumentParser) -> None:
    facts = memory_commands.add_parser("facts", help="list or search a user's facts", parents=[common])
    facts.add_argument("--user", type=USER_ID, required=True)
    facts.add_argument("--search", metavar="QUERY", help="only facts matching QUERY")
    facts.add_argument("--as-of", metavar="DATE", help="the facts that were true then (ISO date or time)")
    facts.add_argument("--all", action="store_true", help="retired facts too")
    facts.add_argument(
        "--repair", action="store_true", help="first index stored facts that search cannot find"
    )
    history = memory_commands.add_parser(
        "history", help="the audit trail of a user's facts", parents=[common]
    )
    history.add_argument("--user", type=USER_ID, required=True)
    history.add_argument("--fact", metavar="ID", help="only this fact's events")
    rollback = memory_commands.add_parser(
        "rollback", help="undo one fact or relation change", parents=[common]
    )
    rollback.add_argument("event", help="the event id, from brain memory history")
    rollback.add_argument("--user", type=USER_ID, required=True)


def _add_graph_command(memory_commands: _Commands, common: argparse.ArgumentParser) -> None:
    graph = memory_commands.add_parser("graph", help="show a user's graph memory", parents=[common])
    graph.add_argument("--user", type=USER_ID, required=True)
    graph.add_argument("--format", choices=("mermaid", "dot", "json"), default=None, help="text to print")
    graph.add_argument("--entity", metavar="NAME", help="only this entity's neighbourhood")
    graph.add_argument("--as-of", metavar="DATE", help="the relations that were true then")
    graph.add_argument("--all", action="store_true", help="retired relations too (dashed)")
    graph.add_argument(
        "--out", metavar="FILE", help="write FILE: .svg/.png through Graphviz, .mmd/.dot/.json as text"
    )


def _add_worker_command(commands: _Commands, common: argparse.ArgumentParser) -> None:
    worker = commands.add_parser("worker", help="apply queued turns to fact memory", parents=[common])
    worker.add_argument("--once", action="store_true", help="apply what is queued now, then exit")
    actions = worker.add_subparsers(dest="worker_command", metavar="ACTION")
    status = actions.add_parser(
        "status", help="the queue's backlog, pending entries and dead letters", parents=[common]
    )
    status.add_argument("--limit", type=int, default=20, help="dead letters to list (default: 20)")
    retry = actions.add_parser("retry", help="queue dead letters again", parents=[common])
    which = retry.add_mutually_exclusive_group(required=True)
    which.add_argument("--all", action="store_true", help="every dead letter")
    which.add_argument(
        "ids", nargs="*", default=[], metavar="ID", help="dead letter ids (brain worker status)"
    )


def _add_service_commands(commands: _Commands, common: argparse.ArgumentParser) -> None:
    serve = commands.add_parser(
        "serve", help="serve the HTTP API, MCP at /mcp and the inspector at /ui", parents=[common]
    )
    serve.add_argument("--host", help="address to listen on (default: serve.host)")
    serve.add_argument("--port", type=int, help="port (default: serve.port; 0 = any free port)")
    serve.add_argument(
        "--workers",
        type=_workers,
        help="processes serving the port (default: serve.workers; 0 = one per core, at most 8)",
    )
    mcp = commands.add_parser(
        "mcp", help="an MCP server over stdio, for editors and desktop apps", parents=[common]
    )
    mcp.add_argument("--user", type=USER_ID, help="whose memory it serves (default: serve.mcp_user)")
    mcp.add_argument("--agent", type=AGENT_ID, help="the agent it serves as (default: serve.mcp_agent)")
    keys = commands.add_parser("keys", help="create, list or revoke API keys", parents=[common])
    actions = keys.add_subparsers(dest="keys_command", metavar="ACTION", required=True)
    create = actions.add_parser("create", help="a new key for one user (shown once)", parents=[common])
    create.add_argument("--user", type=USER_ID, required=True, help="the user whose memory the key reaches")
    create.add_argument(
        "--agent", type=AGENT_ID, help="the agent the key acts as (it sees the user's other facts too)"
    )
    create.add_argument("--name", default="", help="a note to recognise the key by")
    listing = actions.add_parser("list", help="keys (never their secrets)", parents=[common])
    listing.add_argument("--user", type=USER_ID, help="only this user's keys")
    revoke = actions.add_parser("revoke", help="revoke a key at once, on every server", parents=[common])
    revoke.add_argument("id", help="the key's id, from brain keys list")


def _workers(text: str) -> int:
    """A worker count: 0 (one per core) to 64."""
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 <= count <= 64:
        raise argparse.ArgumentTypeError("between 0 (one per core) and 64")
    return count
