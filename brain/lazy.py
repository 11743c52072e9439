"""Lazy package exports (PEP 562): a package's public names are imported on first use, so importing the
package (or one light module of it, such as `brain.errors`) does not load the LLM SDK, Redis, the service...
`brain --version` starts in tens of milliseconds because of it."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, modules: Mapping[str, tuple[str, ...]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of `package`, whose public names are `modules` (module -> the names
    it defines). A name is imported from its module when first asked for, then kept in the package. An
    unknown name raises AttributeError, as a plain module does."""
    where = {name: module for module, names in modules.items() for name in names}
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__
