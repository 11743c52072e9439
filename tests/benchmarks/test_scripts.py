"""Every script in `benchmarks/` still starts as its README command runs it (`python benchmarks/X.py`):
with argparse, `--help` answers; without, the module imports. Four had stopped running, each left behind
by an interface change elsewhere (a helper moved, a parameter renamed), and nothing ran them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p for p in (ROOT / "benchmarks").glob("*.py") if p.name != "__init__.py")
OPTIONAL = {"embeddings_server.py"}  # serves a model package installed on purpose, not by `.ci/run`


def test_every_script_is_seen() -> None:
    assert len(SCRIPTS) >= 20 and ROOT / "benchmarks" / "serve.py" in SCRIPTS


@pytest.mark.parametrize("script", [p for p in SCRIPTS if p.name not in OPTIONAL], ids=lambda p: p.name)
def test_the_script_starts(script: Path, tmp_path: Path) -> None:
    if "argparse" in script.read_text(encoding="utf-8"):
        argv = [sys.executable, str(script), "--help"]  # from elsewhere: the script finds its own packages
    else:  # runs its work when started: imported, as a module of the repository
        argv = [sys.executable, "-c", f"import benchmarks.{script.stem}"]
    cwd = tmp_path if argv[1] == str(script) else ROOT
    kept = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and Path(p).resolve() != ROOT]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(kept)}  # the tests' guard, not the repository
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=cwd, env=env)
    assert done.returncode == 0, done.stderr[-2_000:]
    if argv[1] == str(script):
        assert "usage:" in done.stdout
