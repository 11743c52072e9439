"""Another revision of this repository checked out beside it: a benchmark's before and after in one run."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["revision_tree"]

ROOT = Path(__file__).resolve().parent.parent.parent


@contextlib.contextmanager
def revision_tree(rev: str) -> Iterator[Path]:
    """A temporary detached worktree of `rev`, removed afterwards; `rev` naming a directory (a tree exported
    beforehand, for a machine without the repository's history) is that directory, left as it is."""
    if Path(rev).is_dir():
        yield Path(rev).resolve()
        return
    tmp = Path(tempfile.mkdtemp(prefix="baseline-"))
    git = ["git", "-C", str(ROOT), "worktree"]
    try:
        subprocess.run([*git, "add", "--detach", str(tmp / "tree"), rev], check=True, capture_output=True)
        yield tmp / "tree"
    finally:
        subprocess.run([*git, "remove", "--force", str(tmp / "tree")], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
