"""Health checks behind `brain config check`: each returns (ok, one plain sentence)."""

from __future__ import annotations

import openai

from brain.backends.redis import RedisConnection
from brain.errors import ConfigError, StoreError
from brain.llm.endpoint import create_openai_client
from brain.llm.local import local_model_path
from brain.settings import LLMSettings, LocalSettings, Settings, mask_url

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


async def check_llm(settings: LLMSettings, local: LocalSettings | None = None) -> tuple[bool, str]:
    """Ask the endpoint for its model list: cheap, spends no tokens, proves the URL and key work. Without
    an endpoint, report the embedded model that stands in (`local`), if there is one."""
    if not settings.configured:
        try:
            path = local_model_path(local) if local is not None else None
        except ConfigError as exc:
            return False, str(exc)
        if path is not None:
            return True, f"not configured: the embedded tiny model answers ({path.name}, local.model)"
        return False, "not configured: set OPENAI_API_KEY, or llm.base_url for a local server"
    where = mask_url(settings.base_url or "https://api.openai.com/v1")
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
