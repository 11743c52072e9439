"""A Cluster named by several seed nodes starts while any one of them answers, and every failure of the
cluster client is a `StoreError` that says why (issue 33)."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio.connection import Connection
from redis.exceptions import (
    AskError,
    ClusterDownError,
    ClusterError,
    MasterDownError,
    MaxConnectionsError,
    MovedError,
    RedisClusterException,
    SlotNotCoveredError,
    TryAgainError,
)

from brain import ConfigError, RedisConnection, Settings, StoreError, load_settings
from brain.backends.redis.client import _translated, connect
from brain.errors import UnreachableError
from brain.runtime import open_runtime
from brain.settings import RedisSettings, mask_url
from brain.testing import ScriptedLLM
from roles import Assistant
from tests.brain.backends.redis.test_cluster import cluster_url  # noqa: F401  (the 3-node cluster fixture)
from tests.roles.cli.test_cli import brain
from tests.support.openai_server import Models, ScriptedOpenAIServer
from tests.support.servers import free_port

# ---------------------------------------------------------------- helpers


def node_ports(url: str) -> list[int]:
    """The ports of every node of the cluster `url` names, as CLUSTER NODES lists them."""
    port = url.rsplit(":", 1)[1].split("/")[0]
    nodes = subprocess.run(
        ["redis-cli", "-p", port, "cluster", "nodes"], capture_output=True, text=True, check=True, timeout=10
    ).stdout
    return sorted(int(line.split()[1].split("@")[0].rsplit(":", 1)[1]) for line in nodes.splitlines() if line)


def seeds(*ports: int, password: str = "") -> str:
    """One URL listing every port as a seed node: `redis://[:password@]127.0.0.1:p1,127.0.0.1:p2/0`."""
    credentials = f":{password}@" if password else ""
    return "redis://" + credentials + ",".join(f"127.0.0.1:{p}" for p in ports) + "/0"


def cluster_settings(tmp_path: Path, url: str, **redis: Any) -> Settings:
    return Settings.model_validate(
        {
            "home": str(tmp_path / "home"),
            "redis": {"url": url, "cluster": True, "connect_timeout": 1, **redis},
            "memory": {"facts": {"enabled": False}, "rewrite_followups": False},
        }
    )


@pytest.fixture
def dead_seed_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """redis-py shuffles the seed nodes before asking them; here they are asked in the order written, so
    the dead one is surely asked first."""
    monkeypatch.setattr(random, "shuffle", lambda nodes: None)


# ---------------------------------------------------------------- several seeds: the settings (pure)


def test_one_url_lists_several_seed_nodes() -> None:
    url = "rediss://app:pw-SECRET@10.0.0.1:7000, 10.0.0.2:7001,[::1]:7002,db.example?ssl_cert_reqs=none"
    assert RedisSettings.seed_urls(url) == [
        "rediss://app:pw-SECRET@10.0.0.1:7000?ssl_cert_reqs=none",
        "rediss://app:pw-SECRET@10.0.0.2:7001?ssl_cert_reqs=none",
        "rediss://app:pw-SECRET@[::1]:7002?ssl_cert_reqs=none",
        "rediss://app:pw-SECRET@db.example?ssl_cert_reqs=none",  # no port: 6379
    ]
    for one in ("redis://db:6379/0", "unix:///run/redis.sock", "valkeys://:p,w@db:1/0", "redis://db"):
        assert RedisSettings.seed_urls(one) == [one]  # a comma in a password is no second host
    settings = RedisSettings(url=url, cluster=True)
    assert settings.masked_url == url.replace("pw-SECRET", "***")  # every host as configured, masked
    assert "pw-SECRET" in Settings(redis=settings).secrets()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("redis://h1:7000,,h2:7000/0", "bad host ''"),
        ("redis://h1:7000,h2:x/0", "bad host 'h2:x'"),
        ("redis://h1:7000,h2:/0", "bad host 'h2:'"),
        ("redis://h1:7000,h2:99999/0", "bad host 'h2:99999'"),
        ("redis://h1:7000,redis://h2:7000/0", "write the scheme once"),
        ("redis://h1:7000,:7001/0", "bad host ':7001'"),
    ],
)
def test_a_bad_seed_list_is_refused_naming_the_host_not_the_password(url: str, message: str) -> None:
    url = url.replace("redis://", "redis://:pw-SECRET@", 1)
    with pytest.raises(ConfigError, match=message) as caught:
        load_settings(environ={"BRAIN_REDIS_URL": url}, overrides={"redis.cluster": True})
    assert "pw-SECRET" not in str(caught.value)


def test_several_hosts_need_cluster_true() -> None:
    with pytest.raises(ConfigError, match=r"several hosts.*redis\.cluster: true") as caught:
        load_settings(environ={"BRAIN_REDIS_URL": "redis://:pw-SECRET@h1:7000,h2:7000/0"})
    assert "pw-SECRET" not in str(caught.value)


def test_every_seed_gets_the_urls_credentials_and_tls() -> None:
    url = "rediss://app:pw-SECRET@127.0.0.1:7002,127.0.0.1:7000,127.0.0.1:7001/0"
    settings = RedisSettings(url=url, cluster=True, ssl_cert_reqs="none")
    client = connect(url, settings, cluster=True)  # connects to nothing yet
    nodes = client.nodes_manager.startup_nodes  # type: ignore[union-attr]
    assert list(nodes) == [
        "127.0.0.1:7002",
        "127.0.0.1:7000",
        "127.0.0.1:7001",
    ]  # asked in this order, unshuffled
    for node in nodes.values():
        assert node.connection_class.__name__ == "SSLConnection"
        assert (node.connection_kwargs["username"], node.connection_kwargs["password"]) == (
            "app",
            "pw-SECRET",
        )


# ---------------------------------------------------------------- several seeds: real servers


@pytest.mark.usefixtures("dead_seed_first")
async def test_a_start_with_a_dead_seed_works_and_a_turn_round_trips(
    cluster_url: str,  # noqa: F811  (the fixture imported above)
    tmp_path: Path,
) -> None:
    live = node_ports(cluster_url)
    settings = cluster_settings(tmp_path, seeds(free_port(), *live[:2]))
    async with await RedisConnection.open(settings) as connection:
        assert int((await connection.check()).split(".")[0]) >= 7
        assert connection.masked_url == settings.redis.masked_url  # every seed, as configured
    llm = ScriptedLLM(["Hi Ann, noted: green tea."])
    async with open_runtime(settings, llm=llm, memory_llm=ScriptedLLM()) as runtime:
        assistant = Assistant.for_runtime(runtime)
        assert await assistant.chat("ann", "c1", "Hello! I am Ann and I like green tea.") == (
            "Hi Ann, noted: green tea."
        )
        memory = await assistant.memory_of("ann", "c1")
    assert [(m.role, m.content) for m in memory.history] == [
        ("user", "Hello! I am Ann and I like green tea."),
        ("assistant", "Hi Ann, noted: green tea."),
    ]
    llm.assert_consumed()


async def test_all_seeds_dead_is_unreachable_with_the_masked_url(tmp_path: Path) -> None:
    url = seeds(free_port(), free_port(), free_port(), password="pw-SECRET")
    settings = cluster_settings(tmp_path, url, retries=0)
    with pytest.raises(UnreachableError) as opening:
        await RedisConnection.open(settings)
    with pytest.raises(UnreachableError) as running:
        await open_runtime(settings, llm=ScriptedLLM(), memory_llm=ScriptedLLM()).__aenter__()
    for caught in (opening, running):
        message = str(caught.value)
        assert message.startswith(f"cannot reach Redis at {mask_url(url)}: ")
        assert "no node of the Cluster answers (the last said: Error 111 connecting to 127.0.0.1:" in message
        assert "pw-SECRET" not in message and "\n" not in message and "Traceback" not in message


async def test_a_database_other_than_0_on_a_cluster_is_a_store_error(tmp_path: Path) -> None:
    url = seeds(free_port(), free_port(), password="pw-SECRET").replace("/0", "/1")
    with pytest.raises(StoreError, match=r"bad Redis URL redis://:\*\*\*@127\.0\.0\.1:.*must be 0") as caught:
        await RedisConnection.open(cluster_settings(tmp_path, url))
    assert "pw-SECRET" not in str(caught.value)


def test_brain_config_check_with_a_dead_seed_and_with_all_dead(
    cluster_url: str,  # noqa: F811
    openai_server: ScriptedOpenAIServer,
    tmp_path: Path,
) -> None:
    config = tmp_path / "cluster.yaml"
    config.write_text("redis:\n  cluster: true\n  connect_timeout: 1\n", encoding="utf-8")
    env = {"OPENAI_BASE_URL": openai_server.url, "OPENAI_API_KEY": "sk-test"}
    url = seeds(free_port(), *node_ports(cluster_url)[:2], password="")
    openai_server.script(Models(("gpt-4o-mini",)))
    result = brain("config", "check", "--config", str(config), env={**env, "BRAIN_REDIS_URL": url})
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"ok    redis: {url} answers (server version " in result.stdout

    dead = seeds(free_port(), free_port(), password="pw-SECRET")
    masked = mask_url(dead)
    openai_server.script(Models(("gpt-4o-mini",)))
    fast = ["--config", str(config), "--set", "redis.retries=0"]
    result = brain("config", "check", *fast, env={**env, "BRAIN_REDIS_URL": dead})
    assert result.returncode == 1 and result.stderr == ""  # the check's report: one FAIL line
    failing = [line for line in result.stdout.splitlines() if line.startswith("FAIL")]
    assert len(failing) == 1 and failing[0].startswith(f"FAIL  redis: cannot reach Redis at {masked}: ")
    result = brain("memory", "export", "--user", "a", "--chat", "b", *fast, env={"BRAIN_REDIS_URL": dead})
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith(f"brain: error: cannot reach Redis at {masked}: ")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "pw-SECRET" not in result.stdout + result.stderr


# ---------------------------------------------------------------- the one translation


@pytest.mark.parametrize(
    ("exc", "kind", "reason"),
    [
        (ClusterDownError("CLUSTERDOWN The cluster is down"), StoreError, "failing over or down"),
        (MasterDownError("MASTERDOWN Link with MASTER is down"), StoreError, "failing over or down"),
        (SlotNotCoveredError('Slot "866" is not covered by the cluster.'), StoreError, "no primary"),
        (TryAgainError("Multiple keys request during rehashing of slot"), StoreError, "moving the slot"),
        (AskError("866 127.0.0.1:7001"), StoreError, "moving the slot"),
        (MovedError("866 127.0.0.1:7001"), StoreError, "another node serves the slot"),
        (ClusterError("TTL exhausted."), StoreError, "kept redirecting"),
        (MaxConnectionsError(), StoreError, "redis.max_connections"),
        (
            RedisClusterException(
                "Redis Cluster cannot be connected. Please provide at least one reachable node: "
                "Error 111 connecting to 127.0.0.1:7000. Connection refused."
            ),
            UnreachableError,
            "no node of the Cluster answers (the last said: Error 111 connecting to 127.0.0.1:7000",
        ),
        (
            RedisClusterException("All slots are not covered after query all startup_nodes. 5 of 16384"),
            StoreError,
            "do not cover every slot",
        ),
    ],
)
def test_every_cluster_failure_is_a_store_error_that_says_why(
    exc: Exception, kind: type[StoreError], reason: str
) -> None:
    translated = _translated("SET", exc)
    assert type(translated) is kind
    assert str(translated).startswith("Redis SET failed: ") and reason in str(translated)
    assert type(exc).__name__ in str(translated) or kind is UnreachableError


def test_a_routing_failure_never_quotes_the_keys() -> None:
    exc = RedisClusterException("No targets were found to execute ('GET', 'brain:{u.alice}:chat') command on")
    translated = _translated("GET", exc)
    assert type(translated) is StoreError and "could not route" in str(translated)
    assert "alice" not in str(translated)


async def test_an_attribute_error_is_translated_only_when_redis_py_raised_it() -> None:
    # the failure seen during a primary's failover: a connection whose writer is gone (here: never made)
    try:
        await Connection(host="127.0.0.1", port=free_port())._send_packed_command([b"PING\r\n"])
    except AttributeError as exc:
        theirs = exc
    assert "writelines" in str(theirs)
    translated = _translated("EVALSHA", theirs)
    assert type(translated) is StoreError
    assert str(translated) == (
        "Redis EVALSHA failed: a connection was closed under it (a node failing over?): "
        "AttributeError: 'NoneType' object has no attribute 'writelines'"
    )

    def our_bug(writer: Any) -> None:
        writer.writelines([b"PING\r\n"])

    try:
        our_bug(None)
    except AttributeError as exc:
        ours = exc
    with pytest.raises(AttributeError) as caught:
        _translated("EVALSHA", ours)
    assert caught.value is ours  # raised again as it is: a bug of ours is never hidden in a StoreError


async def test_a_pipeline_of_a_cluster_nobody_answers_is_a_store_error() -> None:
    settings = RedisSettings(cluster=True, connect_timeout=0.5)
    client = connect(seeds(free_port(), free_port()), settings, cluster=True)

    async def read() -> None:
        async with client.pipeline(transaction=False) as pipe:  # reads the topology first
            pipe.get("k")
            await pipe.execute()

    try:
        with pytest.raises(StoreError):
            await read()
    finally:
        await client.aclose()
