"""Instructions a served turn costs: `brain serve` under Valgrind (callgrind), loaded as `serve.py` loads it.

`serve.py`'s CPU time per turn moves by 15-30% between runs on a shared machine, more than most changes of
the served path do; the instructions the server executes move by about 1%. Here one `brain serve --workers
1` runs under callgrind with counting off, beside `serve.py`'s loopback model (zero latency, streaming) and a
local Redis (neither counted). `--clients` clients, each with its own API key, say a first round of turns
(connections, pools and caches as a server that has served holds them); once the server has gone idle,
counting is switched on (`callgrind_control -i on`), every client says `--turns` turns at once over HTTP
(`POST /v1/chat`, server-sent events), and counting is switched off once the server is idle again: what is
counted is all the server did for those turns, the fact worker's extraction of them included (facts are
on, the default). Python, uvicorn, the ASGI app, redis-py and hiredis, the event loop and the collector,
not the kernel's side of the sockets nor cache misses (which `serve.py`'s CPU time includes).
`--baseline REV` counts another revision's server the same way in the same run and reports the ratio.

Needs `valgrind` (Debian: `apt-get install valgrind`); a run takes a few minutes. Prints a table, then one
JSON line.

    python benchmarks/serve_instructions.py [--clients 100 --turns 10] [--baseline REV]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common.revision import revision_tree
from benchmarks.common.serve_load import MARKER, cpu_seconds, ready
from benchmarks.common.servers import local_redis
from benchmarks.serve import MODEL, brain_command, free_port, server_env
from brain.backends.redis.api_keys import RedisApiKeyStore
from brain.backends.redis.client import TranslatingRedis

ROOT = Path(__file__).resolve().parent.parent


async def _idle(pid: int, quiet: float = 0.02, span: float = 3.0, limit: float = 300) -> None:
    """Wait until `pid` spends under `quiet` of a core over `span` seconds: its background work done (the
    fact worker waits `memory.facts.idle_seconds`, 2 s, for more turns before it applies what it holds)."""
    deadline = time.monotonic() + limit
    before = cpu_seconds(pid)
    while time.monotonic() < deadline:
        await asyncio.sleep(span)
        now = cpu_seconds(pid)
        if now - before < quiet * span:
            return
        before = now
    raise SystemExit(f"the server never went idle within {limit:.0f} s")


def _spawn(command: list[str], env: dict[str, str], cwd: Path, out: Any, err: Any) -> subprocess.Popen[str]:
    return subprocess.Popen(command, env=env, cwd=cwd, text=True, stdout=out, stderr=err)


def _counting(switch: str, pid: int) -> None:
    """Counting of the process under callgrind switched `on` or `off`."""
    subprocess.run(["callgrind_control", "-i", switch, str(pid)], check=True, capture_output=True)


async def _turns(url: str, secrets: list[str], turns: int, chat: str) -> int:
    """Every client says `turns` turns at once; the number of failed or cross-tenant turns."""
    import aiohttp

    failed = 0
    connector = aiohttp.TCPConnector(limit=len(secrets))
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=600)) as http:

        async def one(u: int) -> None:
            nonlocal failed
            headers = {"Authorization": f"Bearer {secrets[u]}"}
            for t in range(turns):
                body = {"chat_id": chat, "text": f"<U{u}> turn {t}: what should I pack for Oslo in May?"}
                async with http.post(f"{url}/v1/chat", json=body, headers=headers) as response:
                    raw = (await response.read()).decode()
                if (
                    response.status != 200
                    or "event: done" not in raw
                    or set(MARKER.findall(raw)) - {f"<U{u}>"}
                ):
                    failed += 1

        await asyncio.gather(*(one(u) for u in range(len(secrets))))
    return failed


async def count(
    tree: Path,
    env: dict[str, str],
    secrets: list[str],
    turns: int,
    first: int,
    sets: list[str],
    keep: Path | None = None,
) -> float:
    """Instructions per turn of `tree`'s `brain serve` (see the module)."""
    with tempfile.TemporaryDirectory(prefix="serve-instructions-") as tmp:
        out = Path(tmp) / "callgrind.out"
        command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"]
        command += [*brain_command(tree), "serve", "--port", "0", "--workers", "1"]
        slow = [f"serve.{name}_timeout=600" for name in ("header", "body", "keepalive")]  # ~50x slower here
        command += [arg for kv in [*slow, *sets] for arg in ("--set", kv)]
        log = (Path(tmp) / "stderr").open("w")
        child = _spawn(command, env, tree, subprocess.PIPE, log)  # its URL comes first
        try:
            assert child.stdout is not None
            url = (await asyncio.to_thread(child.stdout.readline)).split()[2]
            await ready(url)
            chat = f"chat-{time.monotonic_ns()}"  # a fresh chat for each server counted: the same load
            if await _turns(url, secrets, first, chat):
                raise SystemExit("the first round failed")
            await _idle(child.pid)
            await asyncio.to_thread(_counting, "on", child.pid)
            failed = await _turns(url, secrets, turns, chat)
            await _idle(child.pid)
            await asyncio.to_thread(_counting, "off", child.pid)
            if failed:
                raise SystemExit(f"{failed} counted turns failed")
            child.send_signal(signal.SIGINT)
            await asyncio.to_thread(child.wait, 300)
        finally:
            if child.poll() is None:
                child.kill()
            log.close()
        if keep is not None:  # for `callgrind_annotate`
            shutil.copyfile(out, keep)
        totals = [line for line in out.read_text().splitlines() if line.startswith("totals:")]
        return int(totals[-1].split()[1]) / (len(secrets) * turns)


async def main(
    clients: int,
    turns: int,
    first: int,
    pieces: int,
    baseline: str | None,
    sets: list[str],
    keep: Path | None,
) -> None:
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("serve_instructions.py needs valgrind (Debian: apt-get install valgrind)")
    counted: dict[str, float] = {}
    with (
        local_redis() as (redis_url, _),
        revision_tree(baseline) if baseline else contextlib.nullcontext(None) as base,
    ):
        port = free_port()
        env = server_env(port, redis_url)
        model = _spawn(
            [sys.executable, "-c", MODEL, str(port), str(pieces)],
            env,
            ROOT,
            subprocess.DEVNULL,
            subprocess.DEVNULL,
        )
        try:
            client = TranslatingRedis.from_url(redis_url)
            keys = RedisApiKeyStore(client)
            secrets = [(await keys.create(f"user-{u}"))[1] for u in range(clients)]
            await client.aclose()
            counted["this"] = await count(ROOT, env, secrets, turns, first, sets, keep)
            if base is not None:
                counted["baseline"] = await count(base, env, secrets, turns, first, sets)
        finally:
            model.send_signal(signal.SIGINT)
            model.wait(timeout=30)
    this, before = counted["this"], counted.get("baseline")
    settings = f", --set {' '.join(sets)}" if sets else ""
    print(
        f"{clients} clients x {turns} turns at once over HTTP, after {first} each{settings}; "
        "a zero-latency model"
    )
    print(f"{'this tree (M/turn)':>19} {'baseline (M/turn)':>18} {'ratio':>7}")
    shown = f"{before / 1e6:>18.3f} {this / before:>7.3f}" if before else f"{'-':>18} {'-':>7}"
    print(f"{this / 1e6:>19.3f} {shown}")
    print(
        json.dumps(
            {
                "clients": clients,
                "turns": clients * turns,
                "baseline": baseline,
                "settings": sets,
                "pieces": pieces,
                "instructions_per_turn": round(this),
                "baseline_instructions_per_turn": round(before) if before else None,
                "ratio_vs_baseline": round(this / before, 3) if before else None,
            }
        )
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--clients", type=int, default=100, help="clients at once (default %(default)s)")
    parser.add_argument(
        "--turns", type=int, default=10, help="counted turns per client (default %(default)s)"
    )
    parser.add_argument("--first", type=int, default=2, help="turns per client before counting")
    parser.add_argument(
        "--pieces",
        type=int,
        default=2,
        help="pieces each answer streams in (default %(default)s, at least 2)",
    )
    parser.add_argument("--baseline", help="a revision (or a directory holding one) counted the same way")
    parser.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a setting of the counted servers, e.g. memory.facts.enabled=false (repeatable)",
    )
    parser.add_argument(
        "--keep", type=Path, help="copy this tree's callgrind output here (callgrind_annotate)"
    )
    asyncio.run(main(**vars(parser.parse_args())))
