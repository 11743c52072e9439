"""The `brain` command: the project's sync edge. Errors print one line and exit non-zero.

Light on purpose: `brain --version`, `--help` and usage errors are answered by the grammar
(`roles.cli.parser`) alone; the command's code and the library are imported once a command runs."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from brain.errors import BrainError, ConfigError, UnreachableError
from roles.cli.parser import build_parser

__all__ = ["main"]

# Secret values the environment may hold: masked in any error printed, whatever raised it.
_SECRET_ENV = ("OPENAI_API_KEY", "BRAIN_REDIS_URL", "REDIS_PASSWORD", "AZURE_OPENAI_API_KEY")


def main(argv: Sequence[str] | None = None, environ: dict[str, str] | None = None) -> int:
    """Entry point of the `brain` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    env = dict(os.environ if environ is None else environ)
    debug = getattr(args, "debug", False)
    secrets = [env[name] for name in _SECRET_ENV if env.get(name)]
    try:
        from roles.cli.dispatch import dispatch

        return dispatch(args, env)
    except KeyboardInterrupt:
        print("brain: interrupted", file=sys.stderr)
        return 130
    except ConfigError as exc:
        if debug:
            raise
        return _fail(f"brain: config error: {exc}", secrets, 2)
    except UnreachableError as exc:  # nothing can run until the store answers: say so in one line
        if debug:
            raise
        return _fail(f"brain: error: {exc}", secrets, 2)
    except BrainError as exc:
        if debug:
            raise
        return _fail(f"brain: error: {exc}", secrets, 1)
    except Exception as exc:
        if debug:
            raise
        text = f"brain: unexpected error: {type(exc).__name__}: {exc} (run with --debug for details)"
        return _fail(text, secrets, 1)


def _fail(text: str, secrets: list[str], status: int) -> int:
    from brain.logs import redact

    print(redact(text, secrets), file=sys.stderr)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
