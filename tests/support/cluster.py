"""A Redis Cluster of real redis-server processes on loopback, for failover tests and benchmarks.

`LocalCluster` starts `primaries` primaries with `replicas` replicas each (`redis-cli --cluster create
... --cluster-replicas N`), waits until every node says `cluster_state:ok`, kills a node the way a crash
does (SIGKILL), watches its replica's promotion, restarts nodes on their own port and config, and stops
everything. It reads the cluster's state with `CLUSTER NODES` / `CLUSTER INFO` / `ROLE` from live nodes
only, so it can be asked while a node is down.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import time
import traceback
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import redis

from brain.errors import StoreError
from tests.support.servers import RedisServerProcess

__all__ = [
    "Call",
    "LocalCluster",
    "NodeView",
    "Trial",
    "cluster_ports",
    "cluster_tools_missing",
    "failover_under_load",
]

SLOTS = 16_384


def cluster_tools_missing() -> str | None:
    """Why a cluster cannot be started here (`redis-server` or `redis-cli` not installed), else None."""
    missing = [tool for tool in ("redis-server", "redis-cli") if shutil.which(tool) is None]
    return f"{' and '.join(missing)} not installed (apt-get install -y redis-server)" if missing else None


def cluster_ports(n: int) -> list[int]:
    """`n` free ports whose cluster-bus port (+10000) is free too."""
    ports: list[int] = []
    while len(ports) < n:
        with socket.socket() as a:
            a.bind(("127.0.0.1", 0))
            port: int = a.getsockname()[1]
        if port + 10_000 > 65_535 or port in ports:
            continue
        with socket.socket() as b:
            try:
                b.bind(("127.0.0.1", port + 10_000))
            except OSError:
                continue
        ports.append(port)
    return ports


@dataclass(frozen=True)
class NodeView:
    """One line of `CLUSTER NODES`: a node as another node sees it."""

    node_id: str
    port: int
    flags: frozenset[str]
    primary_id: str | None  # whom a replica replicates
    connected: bool
    slots: int  # how many slots it serves

    @property
    def is_primary(self) -> bool:
        return "master" in self.flags

    @property
    def failed(self) -> bool:
        return "fail" in self.flags or "fail?" in self.flags


def _slot_count(ranges: list[str]) -> int:
    count = 0
    for item in ranges:
        if item.startswith("["):  # a slot being migrated or imported
            continue
        low, _, high = item.partition("-")
        count += int(high or low) - int(low) + 1
    return count


def parse_cluster_nodes(text: str) -> list[NodeView]:
    views = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 8:
            continue
        address = parts[1].split("@")[0]
        views.append(
            NodeView(
                node_id=parts[0],
                port=int(address.rsplit(":", 1)[1]),
                flags=frozenset(parts[2].split(",")),
                primary_id=None if parts[3] == "-" else parts[3],
                connected=parts[7] == "connected",
                slots=_slot_count(parts[8:]),
            )
        )
    return views


class LocalCluster:
    """`primaries` x (1 + `replicas`) redis-server nodes on loopback, data under `base`.

    `node_timeout_ms` is `cluster-node-timeout` (how long a silent primary takes to be failed over: about
    that, plus the replica's election delay of 0.5-1 s). `appendonly` with `appendfsync` as given, else no
    persistence at all (a killed node comes back empty and resyncs from its new primary)."""

    def __init__(
        self,
        base: Path,
        *,
        primaries: int = 3,
        replicas: int = 1,
        node_timeout_ms: int = 1_000,
        appendonly: bool = False,
        appendfsync: str = "everysec",
        extra: tuple[str, ...] = (),
    ) -> None:
        if cluster_tools_missing():
            raise RuntimeError(cluster_tools_missing())
        self.base = base
        self.primary_count, self.replica_count = primaries, replicas
        self.node_timeout_ms = node_timeout_ms
        options = (
            "--cluster-enabled",
            "yes",
            "--cluster-node-timeout",
            str(node_timeout_ms),
            # a replica may always take over (by default one whose primary was idle for a while refuses:
            # "Disconnected from master for longer than allowed")
            "--cluster-replica-validity-factor",
            "0",
            "--repl-diskless-sync-delay",  # a (re)started replica syncs at once, not 5 s later
            "0",
            "--appendfsync",  # after RedisServerProcess's own `always`: the last one holds
            appendfsync,
            *extra,
        )
        self.nodes = [
            RedisServerProcess(
                base / str(port),
                port=port,
                appendonly=appendonly,
                extra=(*options, "--cluster-config-file", str(base / f"nodes-{port}.conf")),
            )
            for port in cluster_ports(primaries * (1 + replicas))
        ]

    # ------------------------------------------------------------------ lifecycle

    def start(self, timeout: float = 60.0) -> LocalCluster:
        """Start every node, create the cluster, wait until it is up everywhere (else stop them all)."""
        try:
            for node in self.nodes:
                node.start()
            subprocess.run(
                [
                    "redis-cli",
                    "--cluster",
                    "create",
                    *(f"127.0.0.1:{n.port}" for n in self.nodes),
                    "--cluster-replicas",
                    str(self.replica_count),
                    "--cluster-yes",
                ],
                check=True,
                capture_output=True,
                timeout=timeout,
            )
            self.wait_ok(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """The first node's URL (a client discovers the others from it)."""
        return self.nodes[0].url

    @property
    def urls(self) -> list[str]:
        return [n.url for n in self.nodes]

    def node_at(self, port: int) -> RedisServerProcess:
        return next(n for n in self.nodes if n.port == port)

    def live(self) -> list[RedisServerProcess]:
        return [n for n in self.nodes if n.process is not None and n.process.poll() is None]

    # ------------------------------------------------------------------ state

    @staticmethod
    def _ask(node: RedisServerProcess, *command: str) -> str:
        with redis.Redis(host="127.0.0.1", port=node.port, socket_timeout=2, decode_responses=True) as r:
            reply = r.execute_command(*command)
        return reply if isinstance(reply, str) else str(reply)

    def view(self, via: RedisServerProcess | None = None) -> list[NodeView]:
        """`CLUSTER NODES` as `via` (default: the first live node) sees it."""
        node = via or self.live()[0]
        return parse_cluster_nodes(self._ask(node, "CLUSTER", "NODES"))

    def info(self, node: RedisServerProcess) -> dict[str, str]:
        lines = self._ask(node, "CLUSTER", "INFO").splitlines()
        return dict(line.strip().split(":", 1) for line in lines if ":" in line)

    def replication(self, node: RedisServerProcess) -> dict[str, str]:
        """`INFO replication` of `node`."""
        with redis.Redis(host="127.0.0.1", port=node.port, socket_timeout=2, decode_responses=True) as r:
            return {k: str(v) for k, v in r.info("replication").items()}

    def role(self, node: RedisServerProcess) -> str:
        """`master` or `slave`, as the node itself says (`ROLE`)."""
        with redis.Redis(host="127.0.0.1", port=node.port, socket_timeout=1, decode_responses=True) as r:
            return str(r.execute_command("ROLE")[0])

    def primaries(self) -> list[RedisServerProcess]:
        """The live primaries that serve slots, as a live node sees them."""
        live = {n.port for n in self.live()}
        return [
            self.node_at(v.port)
            for v in self.view()
            if v.is_primary and v.slots and not v.failed and v.port in live
        ]

    def replicas_of(self, primary: RedisServerProcess) -> list[RedisServerProcess]:
        views = self.view()
        primary_id = next(v.node_id for v in views if v.port == primary.port)
        return [self.node_at(v.port) for v in views if v.primary_id == primary_id]

    def healthy(self) -> bool:
        """Every live node says `cluster_state:ok` and sees all slots served by live, unfailed primaries and
        every other live node connected; with every node up, each primary has all its replicas, each
        replica's link up and its first sync done (else a primary killed now loses what it acknowledged)."""
        live = self.live()
        whole = len(live) == len(self.nodes)
        try:
            if not all(self.info(n).get("cluster_state") == "ok" for n in live):
                return False
            ports = {n.port for n in live}
            for node in live:
                views = self.view(node)
                served = [v for v in views if v.is_primary and v.slots]
                if sum(v.slots for v in served) != SLOTS:
                    return False
                if any(v.failed or v.port not in ports for v in served):
                    return False
                live_views = [v for v in views if v.port in ports]
                if any(v.failed or not v.connected for v in live_views if "myself" not in v.flags):
                    return False
                if whole and any(
                    sum(r.primary_id == p.node_id for r in live_views) != self.replica_count for p in served
                ):
                    return False
                if self.role(node) == "slave":
                    state = self.replication(node)
                    if state.get("master_link_status") != "up" or state.get("master_sync_in_progress") != "0":
                        return False
        except redis.RedisError:
            return False
        return True

    def wait_ok(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not self.healthy():
            if time.monotonic() > deadline:
                raise RuntimeError(f"cluster under {self.base} not healthy after {timeout} s")
            time.sleep(0.05)

    # ------------------------------------------------------------------ faults

    def kill(self, node: RedisServerProcess) -> float:
        """SIGKILL `node`; the `time.monotonic()` of the kill."""
        node.kill()
        return time.monotonic()

    def wait_promoted(
        self, replicas: list[RedisServerProcess], timeout: float = 30.0, poll: float = 0.01
    ) -> tuple[RedisServerProcess, float]:
        """Wait until one of `replicas` (the killed primary's, taken before the kill) says it is a primary
        (`ROLE`); that node and the `time.monotonic()` it was first seen so (within `poll` seconds)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for replica in replicas:
                try:
                    if self.role(replica) == "master":
                        return replica, time.monotonic()
                except redis.RedisError:
                    pass
            time.sleep(poll)
        raise RuntimeError(f"no replica of the killed primary was promoted within {timeout} s")

    def restart(self, node: RedisServerProcess, timeout: float = 60.0) -> None:
        """Start a killed node again (same port, data and cluster config: it rejoins, as a replica of the
        node that took over if it was a primary) and wait until the cluster is healthy."""
        node.start()
        self.wait_ok(timeout)


# ---------------------------------------------------------------------- a load through a failover

ChatCall = Callable[[str, str, str, "str | None"], Awaitable[object]]
"""One turn: (user_id, chat_id, text, message_id or None) -> the answer; raises on failure."""
StoredTexts = Callable[[str, str], Awaitable[list[str]]]
"""The user messages stored in a chat, oldest first."""


@dataclass(frozen=True)
class Call:
    """One call of a turn (a failed call is retried by its user, with the same message id when it can)."""

    started: float  # time.monotonic()
    ended: float
    error: str | None = None  # the exception's type name
    raw: bool = False  # an error that is not a StoreError


@dataclass
class Trial:
    """What a load saw while a primary was killed and its replica promoted."""

    killed: int  # the port of the primary killed
    promoted: int  # the port of the replica that took over
    kill_at: float  # time.monotonic()
    promoted_at: float  # when the replica first said it was a primary
    load_from: float
    load_until: float
    calls: list[Call] = field(default_factory=list)
    acked: int = 0  # turns whose call returned an answer
    lost: int = 0  # acknowledged turns not stored
    lost_at: list[float] = field(default_factory=list)  # when each lost turn was acknowledged, from the kill
    duplicates: int = 0  # turns stored more than once
    gave_up: int = 0  # turns still failing when the load's drain deadline passed
    errors: Counter[str] = field(default_factory=Counter)
    raw: Counter[str] = field(default_factory=Counter)
    traces: dict[str, str] = field(default_factory=dict)  # one traceback per error type

    @property
    def promotion_s(self) -> float:
        """Seconds from the kill to the promotion."""
        return self.promoted_at - self.kill_at

    @property
    def last_error_at(self) -> float | None:
        ended = [c.ended for c in self.calls if c.error is not None]
        return max(ended) if ended else None

    @property
    def recovery_s(self) -> float:
        """Seconds from the promotion to the end of the last failed call (0 when none failed after it)."""
        last = self.last_error_at
        return max(0.0, last - self.promoted_at) if last is not None else 0.0

    @property
    def error_window_s(self) -> float:
        """Seconds from the kill to the end of the last failed call."""
        last = self.last_error_at
        return max(0.0, last - self.kill_at) if last is not None else 0.0

    def rate(self, start: float, end: float) -> float:
        """Successful calls per second that ended in [start, end) (monotonic times)."""
        ok = sum(1 for c in self.calls if c.error is None and start <= c.ended < end)
        return ok / (end - start) if end > start else 0.0

    def timeline(self, step: float = 0.1) -> list[tuple[float, int, int]]:
        """(seconds since the kill, calls ended, calls failed) per `step`, over the whole load."""
        first = int((self.load_from - self.kill_at) // step)
        last = int((self.load_until - self.kill_at) // step)
        rows = {i: [0, 0] for i in range(first, last + 1)}
        for call in self.calls:
            i = int((call.ended - self.kill_at) // step)
            row = rows.setdefault(i, [0, 0])
            row[0] += 1
            row[1] += call.error is not None
        return [(round(i * step, 3), n, e) for i, (n, e) in sorted(rows.items())]

    def error_spans(self, step: float = 0.1) -> str:
        """The timeline's `step`s with errors, as `start..end s (errors/calls)` runs relative to the kill."""
        spans: list[list[float]] = []
        for t, n, e in self.timeline(step):
            if e and spans and abs(spans[-1][1] - t) < step / 2:
                spans[-1][1], spans[-1][2], spans[-1][3] = t + step, spans[-1][2] + e, spans[-1][3] + n
            elif e:
                spans.append([t, t + step, e, n])
        return ", ".join(f"{a:+.1f}..{b:+.1f} s ({int(e)}/{int(n)})" for a, b, e, n in spans) or "none"


async def failover_under_load(
    cluster: LocalCluster,
    victim: RedisServerProcess,
    chat: ChatCall,
    stored: StoredTexts,
    *,
    users: int = 20,
    before: float = 1.0,
    after: float = 3.0,
    message_ids: bool = True,
    drain: float = 15.0,
    tag: str = "t",
    chat_turns: int = 20,
) -> Trial:
    """`users` users chat in a loop, each turn retried until it succeeds (backoff 0.05 s doubling to 0.5 s;
    with `message_ids`, every retry of a turn carries that turn's id), each user starting a new chat every
    `chat_turns` turns (so that a turn's work stays the same however long the load goes on);
    `before` seconds in, `victim` (a primary) is killed; the load goes on `after` seconds past its
    replica's promotion, then each user finishes the turn in hand (giving up `drain` seconds later).
    Then every chat is read back: acknowledged turns missing are `lost`, turns stored twice `duplicates`.

    Anything but a `StoreError` (a raw client exception, a bug) is counted in `raw` with its first
    traceback; the caller decides what to assert."""
    replicas = await asyncio.to_thread(cluster.replicas_of, victim)
    if not replicas:
        raise RuntimeError(f"the node on port {victim.port} is not a primary with a replica")
    stop = asyncio.Event()
    calls: list[Call] = []
    acked: dict[tuple[str, str], list[tuple[str, float]]] = {}
    errors: Counter[str] = Counter()
    raw: Counter[str] = Counter()
    traces: dict[str, str] = {}
    gave_up = 0

    async def user(u: int) -> None:
        nonlocal gave_up
        turn = 0
        while not stop.is_set():
            text = f"{tag} u{u} turn {turn}: what should I pack for Oslo?"
            user_id, chat_id = f"user{u}", f"{tag}-c{u}-{turn // chat_turns}"
            message_id = f"{tag}-u{u}-t{turn}" if message_ids else None
            backoff, give_up_at = 0.05, float("inf")
            while True:
                started = time.monotonic()
                try:
                    await chat(user_id, chat_id, text, message_id)
                except Exception as exc:
                    name = type(exc).__name__
                    is_raw = not isinstance(exc, StoreError)
                    calls.append(Call(started, time.monotonic(), name, is_raw))
                    errors[name] += 1
                    if is_raw:
                        raw[name] += 1
                    traces.setdefault(name, "".join(traceback.format_exception(exc)))
                    if stop.is_set():
                        give_up_at = min(give_up_at, time.monotonic() + drain)
                    if time.monotonic() > give_up_at:
                        gave_up += 1
                        return
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, 0.5)
                    continue
                calls.append(Call(started, time.monotonic()))
                acked.setdefault((user_id, chat_id), []).append((text, time.monotonic()))
                break
            turn += 1

    load_from = time.monotonic()
    tasks = [asyncio.create_task(user(u)) for u in range(users)]
    try:
        await asyncio.sleep(before)
        kill_at = cluster.kill(victim)
        promoted, promoted_at = await asyncio.to_thread(cluster.wait_promoted, replicas)
        await asyncio.sleep(max(0.0, promoted_at + after - time.monotonic()))
        stop.set()
        load_until = time.monotonic()
        await asyncio.gather(*tasks)
    finally:
        stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    trial = Trial(
        killed=victim.port,
        promoted=promoted.port,
        kill_at=kill_at,
        promoted_at=promoted_at,
        load_from=load_from,
        load_until=load_until,
        calls=sorted(calls, key=lambda c: c.ended),
        acked=sum(map(len, acked.values())),
        gave_up=gave_up,
        errors=errors,
        raw=raw,
        traces=traces,
    )
    for (user_id, chat_id), texts in acked.items():
        kept = Counter(await stored(user_id, chat_id))
        trial.lost_at += [at - kill_at for t, at in texts if kept[t] == 0]
        trial.lost = len(trial.lost_at)
        trial.duplicates += sum(n - 1 for t, n in kept.items() if n > 1 and t.startswith(f"{tag} "))
    return trial
