"""Conformance suites: one per storage protocol (`brain.storage`), which every implementation passes. Subclass
a suite in a test module and override its `backend` fixture with the `Backend` under test; the suites need
pytest-asyncio in auto mode."""

import pkgutil

import pytest

SUITES = tuple(sorted(m.name for m in pkgutil.iter_modules(__path__)))
"""The suites' modules, one per protocol (`blocks`, `facts`, ...)."""

# readable failures from the suites' own asserts (pytest rewrites only test modules by itself)
pytest.register_assert_rewrite(*(f"{__name__}.{suite}" for suite in SUITES))

__all__ = ["SUITES"]
