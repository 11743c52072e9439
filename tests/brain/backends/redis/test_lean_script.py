"""`LeanScript`: a script call on the standalone client is one EVALSHA (loaded again after NOSCRIPT), and on
a pipeline redis-py's own, on real servers."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from brain.backends.redis.client import TranslatingRedis, connect
from brain.backends.redis.lean_script import LeanScript
from brain.settings import RedisSettings

PAIR = "return {#KEYS, KEYS[1] or '', ARGV[1] or ''}"


async def test_calls_send_evalsha_and_reload_a_lost_script(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = connect(redis_url, RedisSettings(url=redis_url))
    assert isinstance(client, TranslatingRedis)
    sent: list[tuple[Any, ...]] = []
    execute = TranslatingRedis.execute_command

    async def recorded(self: TranslatingRedis, *args: Any, **options: Any) -> Any:
        sent.append(args)
        return await execute(self, *args, **options)

    monkeypatch.setattr(TranslatingRedis, "execute_command", recorded)
    try:
        script = client.register_script(PAIR)
        assert isinstance(script, LeanScript)
        assert await script(keys=["k1", "k2"], args=["v"]) == [2, b"k1", b"v"]  # NOSCRIPT, loaded, sent
        assert await script() == [0, b"", b""]
        assert await script(args=["only"], client=client) == [0, b"", b"only"]
        names = [a[0] for a in sent]
        assert names == ["EVALSHA", "SCRIPT LOAD", "EVALSHA", "EVALSHA", "EVALSHA"]
        with redis.Redis.from_url(redis_url) as admin:
            admin.script_flush()
        assert await script(keys=["x"]) == [1, b"x", b""]
        async with client.pipeline(transaction=False) as pipe:  # redis-py's own way on a pipeline
            await script(keys=["p"], args=["q"], client=pipe)
            assert await pipe.execute() == [[1, b"p", b"q"]]
    finally:
        await client.aclose()
