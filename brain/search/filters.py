"""The filters every kind of index search shares: tags and a time range, as a set of allowed ids."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from brain.store.connection import RedisClient

__all__ = ["allowed_ids", "tag_list", "text"]


def text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def tag_list(tags: Iterable[str]) -> list[str]:
    """Tags as an index stores them: stripped, lower case, without blanks or repeats, sorted. Pure."""
    return sorted({t.strip().lower() for t in tags if t.strip()})


async def allowed_ids(
    client: RedisClient, base: str, tags: Sequence[str], start: float | None, end: float | None
) -> set[str] | None:
    """The ids of `base` that carry one of `tags` and fall in [start, end] (one round trip); None without
    filters."""
    tags = tag_list(tags)
    dated = start is not None or end is not None
    if not tags and not dated:
        return None
    pipe = client.pipeline(transaction=False)
    for tag in tags:
        pipe.smembers(f"{base}:tag:{tag}")
    if dated:
        pipe.zrangebyscore(f"{base}:time", "-inf" if start is None else start, "+inf" if end is None else end)
    sets = [{text(i) for i in members} for members in await pipe.execute()]
    allowed = set().union(*sets[: len(tags)]) if tags else None
    if dated:
        allowed = sets[-1] if allowed is None else allowed & sets[-1]
    return allowed
