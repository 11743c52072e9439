"""Shared fixtures: the loopback-only network guard, real Redis servers, the scripted OpenAI server."""

from __future__ import annotations

import os
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import redis
import redis.asyncio as aioredis

from brain.backends.memory import InMemoryStore
from brain.backends.redis import RedisMemoryStore
from brain.backends.redis.client import TranslatingRedis, connect
from brain.backends.redis.embedded import EmbeddedValkey
from brain.settings import RedisSettings
from brain.storage.conversation import MemoryStore
from tests.support.network_guard import GUARD_LOG_ENV, NetworkGuard
from tests.support.openai_server import ScriptedOpenAIServer
from tests.support.servers import RedisServerProcess

# ---------------------------------------------------------------- network guard


_GUARD = NetworkGuard()
_CHILD_LOG = Path(tempfile.mkdtemp(prefix="brain-guard-")) / "attempts.log"


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get("BRAIN_TEST_REDIS_URL") and config.getoption("dist", "no") != "no":
        # tests empty the server, kill its clients, flush its scripts and block it: one server per worker
        raise pytest.UsageError("BRAIN_TEST_REDIS_URL names one server for all workers: run without -n")
    _GUARD.install()
    # Python subprocesses started by tests (the `brain` CLI, writer processes) get the same guard.
    site_dir = str(Path(__file__).parent / "support" / "site")
    os.environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, [site_dir, str(Path(__file__).parents[1]), os.environ.get("PYTHONPATH")])
    )
    os.environ[GUARD_LOG_ENV] = str(_CHILD_LOG)


@pytest.fixture(autouse=True)
def network_guard() -> Iterator[NetworkGuard]:
    start = len(_GUARD.attempts)
    yield _GUARD
    attempts = _GUARD.attempts[start:]
    if _CHILD_LOG.exists():
        attempts += _CHILD_LOG.read_text().splitlines()
        _CHILD_LOG.unlink()
    if attempts:
        del _GUARD.attempts[start:]
        pytest.fail(f"test opened connections outside loopback: {attempts}")


# ---------------------------------------------------------------- environment hygiene


@pytest.fixture(autouse=True)
def _clean_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """No test sees the developer's keys, config or data directory. The embedded model and embedder stay
    out (in this process and in the `brain` processes tests start) unless a test is marked `local_model`:
    tests script their models."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "BRAIN_REDIS_URL", "BRAIN_LLM_MODEL", "BRAIN_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("BRAIN_HOME", str(tmp_path / "brain-home"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    if request.node.get_closest_marker("local_model") is None:
        monkeypatch.setenv("BRAIN_LOCAL_MODEL", "off")
        monkeypatch.setenv("BRAIN_LOCAL_EMBEDDER", "off")
        monkeypatch.setattr("brain.llm.local._installed", lambda module: False)
    else:
        monkeypatch.delenv("BRAIN_LOCAL_MODEL", raising=False)
        monkeypatch.delenv("BRAIN_LOCAL_EMBEDDER", raising=False)


# ---------------------------------------------------------------- serial tests


@pytest.hookimpl(tryfirst=True)  # before `-m` selects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The embedded model computes on every core and slows many times over beside other work (its first
    token past its deadline): a `local_model` test is a `serial` one, run alone after the parallel run."""
    for item in items:
        if item.get_closest_marker("local_model") is not None:
            item.add_marker(pytest.mark.serial)


# ---------------------------------------------------------------- real servers


@pytest.fixture(scope="session")
def redis_server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Debian's redis-server on loopback, or the server named by BRAIN_TEST_REDIS_URL."""
    given = os.environ.get("BRAIN_TEST_REDIS_URL")
    if given:
        yield given
        return
    server = RedisServerProcess(tmp_path_factory.mktemp("redis"), appendonly=False)
    server.start()
    yield server.url
    server.stop()


@pytest.fixture(scope="session")
def valkey_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The embedded Valkey, started by the package itself."""
    embedded = EmbeddedValkey(tmp_path_factory.mktemp("valkey-home"))
    url = embedded.start()
    yield url
    embedded.stop()


@pytest.fixture(params=["redis", "valkey"])
def redis_url(request: pytest.FixtureRequest) -> str:
    """A real server of each kind, emptied for the test."""
    name = "redis_server_url" if request.param == "redis" else "valkey_url"
    url: str = request.getfixturevalue(name)
    with redis.Redis.from_url(url) as client:
        client.flushdb()
    return url


@pytest.fixture
async def redis_client(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    """A client as the backend makes them: its failures are `StoreError`s, and at the connection cap a
    command waits its turn."""
    client = connect(redis_url, RedisSettings())
    yield client
    await client.aclose()


# ---------------------------------------------------------------- scripted OpenAI-compatible server


@pytest.fixture
def openai_server() -> Iterator[ScriptedOpenAIServer]:
    server = ScriptedOpenAIServer().start()
    yield server
    server.stop()
    server.verify()


# ---------------------------------------------------------------- memory stores


@pytest.fixture(params=["memory", "redis", "valkey"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[MemoryStore]:
    """Each MemoryStore implementation: they must pass one contract."""
    if request.param == "memory":
        yield InMemoryStore()
        return
    url: str = request.getfixturevalue("redis_server_url" if request.param == "redis" else "valkey_url")
    client = TranslatingRedis.from_url(url)
    await client.flushdb()
    yield RedisMemoryStore(client, prefix="t")
    await client.aclose()
