"""Health checks behind `brain config check`: each returns (ok, one plain sentence)."""

from __future__ import annotations

import openai

from brain.errors import StoreError
from brain.llm.endpoint import create_openai_client
from brain.settings import LLMSettings, Settings
from brain.store.connection import RedisConnection

__all__ = ["check_llm", "check_redis"]


async def check_redis(settings: Settings) -> tuple[bool, str]:
    """Connect (starting the embedded server when no URL is set), ping and report the version."""
    try:
        async with await RedisConnection.open(settings) as connection:
            version = await connection.check()
            where = (
                "embedded Valkey in " + str(connection.embedded.dir)
                if connection.embedded
                else connection.masked_url
            )
            return True, f"{where} answers (server version {version})"
    except StoreError as exc:
        return False, str(exc)


async def check_llm(settings: LLMSettings) -> tuple[bool, str]:
    """Ask the endpoint for its model list: cheap, spends no tokens, proves the URL and key work."""
    if not settings.configured:
        return False, "not configured: set OPENAI_API_KEY, or llm.base_url for a local server"
    where = settings.base_url or "https://api.openai.com/v1"
    quick = settings.model_copy(update={"max_retries": 0, "timeout": min(settings.timeout, 10.0)})
    client = create_openai_client(quick)
    try:
        models = [m.id async for m in client.models.list()]
    except openai.APIStatusError as exc:
        return False, f"{where} answered HTTP {exc.status_code}: {exc.message}"
    except openai.OpenAIError as exc:
        return False, f"cannot reach {where}: {type(exc).__name__}: {exc}"
    finally:
        await client.close()
    known = "" if not models or settings.model in models else f"; model {settings.model!r} is not in its list"
    return True, f"{where} answers ({len(models)} models){known}"
