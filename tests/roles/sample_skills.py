"""Skills used by the tests (entry points `tests.roles.sample_skills:NAME`)."""

from __future__ import annotations

import asyncio


def get_weather(city: str) -> dict[str, object]:
    return {"city": city, "forecast": "sunny", "celsius": 21}


async def add(a: int, b: int) -> int:
    await asyncio.sleep(0)
    return a + b


def broken(**_: object) -> str:
    raise RuntimeError("the weather service is down")
