"""Every module imports first, on its own (no import cycles, nothing read at import time)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODULES = sorted(
    ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
    for package in ("brain", "actions", "roles")
    for p in (ROOT / package).rglob("*.py")
)

# One interpreter; before each import every project module is forgotten, so each is imported first once.
PROBE = """
import importlib, sys
failed = []
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m.split(".")[0] in {"brain", "actions", "roles"}]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as exc:
        failed.append(f"{name}: {type(exc).__name__}: {exc}")
print("\\n".join(failed))
"""


def test_every_module_imports_first() -> None:
    assert len(MODULES) > 30
    result = subprocess.run([sys.executable, "-c", PROBE, *MODULES], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""
