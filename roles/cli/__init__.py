"""The `brain` command line: the project's sync edge, on top of the roles."""

from roles.cli.main import main

__all__ = ["main"]
