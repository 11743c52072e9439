"""Instructions a library turn costs: `benchmarks/concurrency.py`'s turns counted by Valgrind (callgrind).

CPU time on a shared machine moves by 10-20% from one run to the next, more than most changes of the turn
path do; the instructions a run executes move by well under 1%. Each run here starts a process under
callgrind with counting off; the process opens a runtime (a local Redis in its own process, not counted),
runs a warm-up chat and a first round (caches as a process that has served holds them), then waits while
counting is switched on (`callgrind_control -i on`), runs `--users` users x `--turns` turns at once and waits
again while counting is switched off. What is counted is every instruction of those turns in this process:
Python, pydantic, redis-py and hiredis, tiktoken, the event loop and the garbage collector (not its cache
misses, which the CPU time of `concurrency.py` includes). `--baseline REV` counts another revision the same
way in the same run (its `brain` and `roles`, this script's turns) and reports the ratio; `--facts N` gives
each user N facts first (`concurrency.py --facts`).

Needs `valgrind` (Debian: `apt-get install valgrind`). A run of 1,000 turns takes about half a minute.
Prints a table, then one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LANGUAGES = ("en", "zh")


def _wait(sync: Path, name: str) -> None:
    (sync / f"{name}.ready").touch()
    while not (sync / f"{name}.go").exists():
        time.sleep(0.02)


async def _turns(tree: Path, users: int, turns: int, language: str, facts: int, sync: Path) -> None:
    """The child: this script's turns (`concurrency.py`'s) on `tree`'s library."""
    sys.path.insert(0, str(tree))
    from benchmarks.common.servers import local_redis  # the tree's own: `brain` and `roles` come from it
    from brain import Settings, open_runtime
    from roles import Assistant

    spec = importlib.util.spec_from_file_location(
        "turns_of_this_tree", ROOT / "benchmarks" / "concurrency.py"
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)  # its imports find `tree`'s modules, loaded above
    question = bench.QUESTIONS[language]
    with local_redis() as (url, _):
        settings = Settings.model_validate(
            {"redis": {"url": url}, "llm": {"model": "gpt-4o-mini"}, "local": {"embedder": "off"}}
        )
        async with open_runtime(settings, llm=bench.EchoLLM()) as runtime:
            assistant = Assistant.for_runtime(runtime)
            await bench.seed_facts(runtime, users, facts)
            await bench.one_user(assistant, "warm-up", "<U0R0>", "warm-up", [], turns, question)
            await bench.run(assistant, 1, users, turns, question)
            latencies: list[float] = []
            _wait(sync, "start")
            replies = await asyncio.gather(
                *(
                    bench.one_user(assistant, f"user-{u}", f"<U{u}R2>", "run-2", latencies, turns, question)
                    for u in range(users)
                )
            )
            _wait(sync, "stop")
            assert sum(map(len, replies)) == users * turns


def _tail(sync: Path) -> str:
    return (sync / "stderr").read_text(errors="replace")[-3000:]


def count(tree: Path, users: int, turns: int, language: str, facts: int = 0) -> float:
    """Instructions per turn of `tree`'s library (see the module)."""
    with tempfile.TemporaryDirectory(prefix="turn-instructions-") as tmp:
        sync, out = Path(tmp), Path(tmp) / "callgrind.out"
        command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"]
        command += [
            sys.executable,
            __file__,
            "--child",
            str(tree),
            str(users),
            str(turns),
            language,
            str(facts),
            tmp,
        ]
        log = (sync / "stderr").open("w")  # a file, not a pipe: a child writing much never blocks on it
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
        try:
            for name, switch in (("start", "on"), ("stop", "off")):
                while not (sync / f"{name}.ready").exists():
                    if child.poll() is not None:
                        raise RuntimeError(f"the counted process ended early:\n{_tail(sync)}")
                    time.sleep(0.05)
                subprocess.run(
                    ["callgrind_control", "-i", switch, str(child.pid)], check=True, capture_output=True
                )
                (sync / f"{name}.go").touch()
            child.wait(timeout=600)
        finally:
            with contextlib.suppress(ProcessLookupError):
                child.kill()
            log.close()
        if child.returncode != 0:
            raise RuntimeError(f"the counted process failed:\n{_tail(sync)}")
        totals = [line for line in out.read_text().splitlines() if line.startswith("totals:")]
        return int(totals[-1].split()[1]) / (users * turns)  # "summary:" is what was counted at the start


def options(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--users", type=int, default=200, help="users at once (default %(default)s)")
    parser.add_argument("--turns", type=int, default=5, help="turns per user (default %(default)s)")
    parser.add_argument("--language", nargs="+", choices=LANGUAGES, default=list(LANGUAGES))
    parser.add_argument("--facts", type=int, default=0, help="facts each user has (concurrency.py's)")
    parser.add_argument("--baseline", help="a revision (or a directory holding one) counted the same way")
    return parser.parse_args(argv)


def main(users: int, turns: int, language: list[str], facts: int, baseline: str | None) -> None:
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("turn_instructions.py needs valgrind (Debian: apt-get install valgrind)")
    from benchmarks.common.revision import revision_tree

    counted: dict[str, dict[str, float]] = {"this": {}, "baseline": {}}
    with revision_tree(baseline) if baseline else contextlib.nullcontext(None) as base:
        for lang in language:
            counted["this"][lang] = count(ROOT, users, turns, lang, facts)
            if base is not None:
                counted["baseline"][lang] = count(base, users, turns, lang, facts)
    print(
        f"{users} users x {turns} turns at once, {facts} facts each, counted after a first round; "
        "zero-latency model"
    )
    print(f"{'language':>9} {'this tree (M/turn)':>19} {'baseline (M/turn)':>18} {'ratio':>7}")
    ratios = {}
    for lang in language:
        this, before = counted["this"][lang], counted["baseline"].get(lang)
        ratios[lang] = round(this / before, 3) if before else None
        shown = f"{before / 1e6:>18.3f} {this / before:>7.3f}" if before else f"{'-':>18} {'-':>7}"
        print(f"{lang:>9} {this / 1e6:>19.3f} {shown}")
    print(
        json.dumps(
            {
                "users": users,
                "turns": users * turns,
                "facts": facts,
                "baseline": baseline,
                "instructions_per_turn": {k: round(v) for k, v in counted["this"].items()},
                "baseline_instructions_per_turn": {k: round(v) for k, v in counted["baseline"].items()},
                "ratio_vs_baseline": ratios if baseline else {},
            }
        )
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        tree, users, turns, language, facts, sync = sys.argv[2:8]
        asyncio.run(_turns(Path(tree), int(users), int(turns), language, int(facts), Path(sync)))
    else:
        sys.path.insert(0, str(ROOT))
        main(**vars(options()))
