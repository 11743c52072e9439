"""Roles and the `brain` command line."""

__all__: list[str] = []
