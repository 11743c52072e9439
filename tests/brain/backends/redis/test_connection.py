"""Connecting to real servers: URL forms, credentials, TLS, failures."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
import redis

from brain import RedisConnection, Settings, StoreError
from tests.support.certs import make_certs
from tests.support.servers import RedisServerProcess, free_port


def settings_for(tmp_path: Path, **redis_settings: object) -> Settings:
    return Settings.model_validate({"home": str(tmp_path / "home"), "redis": redis_settings})


async def test_connects_pings_and_round_trips(redis_url: str, tmp_path: Path) -> None:
    async with await RedisConnection.open(settings_for(tmp_path, url=redis_url)) as conn:
        assert int((await conn.check()).split(".")[0]) >= 7
        await conn.client.set("k", b"\xff\x00bytes")
        assert await conn.client.get("k") == b"\xff\x00bytes"
        assert conn.embedded is None


async def test_acl_user_and_password(redis_url: str, tmp_path: Path) -> None:
    with redis.Redis.from_url(redis_url) as admin:
        admin.acl_setuser("brainuser", enabled=True, passwords=["+s3cret-pw"], commands=["+@all"], keys=["*"])
    try:
        host_port = redis_url.rsplit("@", 1)[-1].removeprefix("redis://")
        in_settings = settings_for(
            tmp_path, url=f"redis://{host_port}", username="brainuser", password="s3cret-pw"
        )
        in_url = settings_for(tmp_path, url=f"redis://brainuser:s3cret-pw@{host_port}")
        for settings in (in_settings, in_url):
            async with await RedisConnection.open(settings) as conn:
                assert await conn.client.acl_whoami() == "brainuser"
                assert "s3cret-pw" not in conn.masked_url
        bad = settings_for(tmp_path, url=redis_url, username="brainuser", password="wrong-pw")
        with pytest.raises(StoreError, match="cannot reach Redis") as caught:
            await RedisConnection.open(bad)
        assert "wrong-pw" not in str(caught.value)
    finally:
        with redis.Redis.from_url(redis_url) as admin:
            admin.acl_deluser("brainuser")


async def test_redis_down_is_store_error_with_masked_url(tmp_path: Path) -> None:
    url = f"redis://:hunter2-pw@127.0.0.1:{free_port()}/0"
    with pytest.raises(StoreError) as caught:
        await RedisConnection.open(settings_for(tmp_path, url=url, retries=0, connect_timeout=1))
    message = str(caught.value)
    assert "redis://:***@127.0.0.1" in message and "hunter2-pw" not in message
    translated = caught.value.__cause__  # the client's failure, translated once into a StoreError
    assert isinstance(translated, StoreError) and isinstance(translated.__cause__, redis.ConnectionError)


async def test_unix_socket(tmp_path: Path) -> None:
    sock = tmp_path / "r.sock"
    server = RedisServerProcess(tmp_path / "unix", appendonly=False, extra=("--unixsocket", str(sock)))
    server.start()
    try:
        async with await RedisConnection.open(settings_for(tmp_path, url=f"unix://{sock}")) as conn:
            assert await conn.client.ping()
    finally:
        server.stop()


async def test_tls_with_ca_bundle(tmp_path: Path) -> None:
    certs = tmp_path / "certs"
    certs.mkdir()
    make_certs(certs)
    port = free_port()
    server = RedisServerProcess(
        tmp_path / "tls",
        appendonly=False,
        extra=(
            "--port",
            "0",
            "--tls-port",
            str(port),
            "--tls-cert-file",
            str(certs / "server.crt"),
            "--tls-key-file",
            str(certs / "server.key"),
            "--tls-ca-cert-file",
            str(certs / "ca.crt"),
            "--tls-auth-clients",
            "no",
        ),
    )
    server.start(ping=False)
    try:
        url = f"rediss://127.0.0.1:{port}/0"
        settings = settings_for(tmp_path, url=url, ssl_ca_certs=str(certs / "ca.crt"))
        deadline = time.monotonic() + 10
        while True:
            try:
                conn = await RedisConnection.open(settings)
                break
            except StoreError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.1)
        async with conn:
            assert await conn.client.ping()
        with pytest.raises(StoreError, match="certificate verify failed"):
            await RedisConnection.open(settings_for(tmp_path, url=url, retries=0))  # no CA: refused
    finally:
        server.stop()


async def test_bad_url_is_a_config_error_at_load() -> None:
    from brain import ConfigError, load_settings

    with pytest.raises(ConfigError, match="must start with redis://"):
        load_settings(environ={"BRAIN_REDIS_URL": "http://127.0.0.1:6379"})


async def test_the_pool_waits_for_a_free_connection(redis_server_url: str, tmp_path: Path) -> None:
    from brain import Message, RedisMemoryStore
    from brain.storage.conversation import Conversation, WriteBatch

    settings = Settings.model_validate(
        {"home": str(tmp_path), "redis": {"url": redis_server_url, "max_connections": 4, "pool_timeout": 10}}
    )
    async with await RedisConnection.open(settings) as conn:
        store = RedisMemoryStore(conn.client, prefix="pool")

        async def chat(i: int) -> None:
            for t in range(5):
                await store.write(
                    Conversation(f"u{i}", "c"), WriteBatch(turns=((Message(content=f"{t}"), 1),))
                )

        await asyncio.gather(*(chat(i) for i in range(65)))  # 65 chats on 4 connections: they wait
        for i in range(65):
            state = await store.load(Conversation(f"u{i}", "c"), window_turns=9, knowledge_items=0)
            assert state.meta.turn_count == 5

    tight = settings.model_copy(
        update={"redis": settings.redis.model_copy(update={"max_connections": 1, "pool_timeout": 0.2})}
    )
    async with await RedisConnection.open(tight) as conn:
        store = RedisMemoryStore(conn.client, prefix="pool")
        blocker = asyncio.create_task(conn.client.blpop(["pool:never"], timeout=1))
        await asyncio.sleep(0.05)
        with pytest.raises(StoreError, match="No connection available"):
            await conn.client.hget("pool:other", "f")  # a pooled command (GET shares the scripts')
        # script calls share their own connection (`brain.backends.redis.multiplex`): never held up here
        state = await store.load(Conversation("u0", "c"), window_turns=1, knowledge_items=0)
        assert state.meta.turn_count == 5
        await blocker
