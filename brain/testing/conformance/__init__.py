"""Conformance suites: one per storage protocol (`brain.storage`), which every implementation passes. Subclass
a suite in a test module and override its `backend` fixture with the `Backend` under test; the suites need
pytest-asyncio in auto mode."""

import pytest

SUITES = (
    "block_sessions",
    "blocks",
    "conversation",
    "facts",
    "graph",
    "index",
    "keys",
    "procedures",
    "queue",
    "usage",
)

# readable failures from the suites' own asserts (pytest rewrites only test modules by itself)
pytest.register_assert_rewrite(*(f"{__name__}.{suite}" for suite in SUITES))

__all__ = ["SUITES"]
