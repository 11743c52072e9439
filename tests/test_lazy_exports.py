"""The packages `brain`, `roles` and `actions` export their public names lazily (`brain.lazy`): importing a
package loads none of them, each name resolves to its module's object on first use, and the names mypy
sees (the `TYPE_CHECKING` imports) are exactly the names resolved at run time and listed in `__all__`."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
import types
from pathlib import Path

import pytest
from packaging.version import Version

from brain.lazy import lazy_exports

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("brain", "roles", "actions")


def _declared(package: str) -> tuple[set[str], set[str]]:
    """The names a package's `__init__` imports under TYPE_CHECKING, and those its lazy map names."""
    tree = ast.parse((ROOT / package / "__init__.py").read_text(encoding="utf-8"))
    branch = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    typed = {a.asname or a.name for n in branch.body if isinstance(n, ast.ImportFrom) for a in n.names}
    call = next(n for n in ast.walk(ast.Module(branch.orelse, [])) if isinstance(n, ast.Call))
    mapping = ast.literal_eval(call.args[1])
    return typed, {name for names in mapping.values() for name in names}


@pytest.mark.parametrize("package", PACKAGES)
def test_typed_names_lazy_names_and_all_agree(package: str) -> None:
    typed, lazy = _declared(package)
    exported = set(importlib.import_module(package).__all__) - {"__version__"}
    assert len(exported) >= 10
    assert typed == lazy == exported


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_is_its_module_object(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        value = getattr(module, name)
        home = getattr(value, "__module__", None)
        if isinstance(value, type | types.FunctionType) and home is not None:
            assert getattr(importlib.import_module(home), value.__name__) is value
    assert set(module.__all__) <= set(dir(module))
    with pytest.raises(AttributeError, match="has no attribute 'Nonexistent'"):
        module.Nonexistent  # noqa: B018


def test_from_import_resolves_lazily() -> None:
    from actions import Summarize
    from actions.summarize import Summarize as summarize_class
    from brain import BrainMemory, Settings, __version__
    from brain.memory.brain_memory import BrainMemory as memory_class
    from brain.settings import Settings as settings_class
    from roles import Assistant, tool
    from roles.assistant import Assistant as assistant_class
    from roles.tools import tool as tool_function

    assert (Summarize, BrainMemory, Settings, Assistant, tool) == (
        summarize_class,
        memory_class,
        settings_class,
        assistant_class,
        tool_function,
    )
    assert str(Version(__version__)) == __version__  # PEP 440, in its normal form


def test_importing_the_packages_loads_no_public_name() -> None:
    code = (
        "import json, sys\nimport brain, roles, actions, brain.errors\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'brain', 'roles', 'actions', 'openai', 'redis', 'pydantic', 'httpx', 'starlette', 'mcp'})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60, check=True
    )
    assert json.loads(result.stdout) == ["actions", "brain", "brain.errors", "brain.lazy", "roles"]


def test_lazy_exports_imports_a_name_once_then_keeps_it() -> None:
    package = types.ModuleType("lazy_probe")
    sys.modules["lazy_probe"] = package
    try:
        getattr_, dir_ = lazy_exports("lazy_probe", {"json": ("dumps", "loads"), "textwrap": ("dedent",)})
        assert getattr_("dumps") is json.dumps
        assert package.__dict__["dumps"] is json.dumps  # kept: the next lookup does not reach __getattr__
        assert "loads" not in package.__dict__
        assert {"dumps", "loads", "dedent"} <= set(dir_())
        with pytest.raises(AttributeError, match="module 'lazy_probe' has no attribute 'other'"):
            getattr_("other")
    finally:
        del sys.modules["lazy_probe"]
