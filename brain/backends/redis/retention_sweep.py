"""Which chats the retention policy may change (`brain.memory.retention`): one SCAN of the deployment's
conversation metas, read in pipelined chunks. A chat is a candidate when its summary reaches past the
turns whose text was already dropped (`summary_upto > dropped_upto`); other chats are left unread, so a
run over a quiet deployment costs one HMGET per chat. Users in the cold archive have no meta in Redis and
are not found (their chats are retained once they are back)."""

from __future__ import annotations

from brain.backends.redis.client import RedisClient
from brain.keys import readable_id
from brain.storage.conversation import Conversation

__all__ = ["retention_candidates"]

_CHUNK = 500


async def retention_candidates(client: RedisClient, prefix: str) -> list[Conversation]:
    """Chats with summarized turns whose text is still kept, in no particular order."""
    metas = [k async for k in client.scan_iter(match=f"{prefix}:{{[bh]*}}:meta", count=1_000)]
    found: list[Conversation] = []
    for start in range(0, len(metas), _CHUNK):
        pipe = client.pipeline(transaction=False)
        for key in metas[start : start + _CHUNK]:
            pipe.hmget(key, ["user_id", "chat_id", "summary_upto", "dropped_upto"])
        for user, chat, summarized, dropped in await pipe.execute():
            if user is None or chat is None or _int(summarized) <= _int(dropped):
                continue
            found.append(Conversation(readable_id(user), readable_id(chat)))
    return found


def _int(raw: bytes | None) -> int:
    """A meta counter (0 when missing or not a number). Pure."""
    try:
        return int(raw or b"0")
    except ValueError:
        return 0
