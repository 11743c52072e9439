"""Message ids: a random uuid4's hex digits, as `uuid.uuid4().hex` gives them (other modules pack them as
uuids: `brain.backends.redis.packed_ids`)."""

from __future__ import annotations

import uuid

from brain.message import Message


def test_new_ids_are_distinct_uuid4_hex() -> None:
    ids = [Message(content="x").id for _ in range(20_000)]
    assert len(set(ids)) == len(ids)
    for made in ids:
        parsed = uuid.UUID(made)
        assert made == parsed.hex and parsed.version == 4 and parsed.variant == uuid.RFC_4122
    assert {made[12] for made in ids} == {"4"} and {made[16] for made in ids} == set("89ab")
    assert len({made[0] for made in ids}) == 16  # the random digits take every value
