from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brain import BrainMemory, InputError
from brain.keys import conversation_keys, encode_id

SAFE = re.compile(r"^[A-Za-z0-9_-]+$")


@given(st.one_of(st.text(min_size=1, max_size=300), st.binary(min_size=1, max_size=300)))
def test_encoded_ids_are_key_safe(value: str | bytes) -> None:
    assert SAFE.match(encode_id(value))


@given(st.text(min_size=1, max_size=120), st.text(min_size=1, max_size=120))
def test_distinct_ids_give_distinct_encodings(a: str, b: str) -> None:
    if a != b:
        assert encode_id(a) != encode_id(b)


def test_keys_share_one_hash_tag() -> None:
    keys = conversation_keys("brain", "u:*{}", "chat\n1")
    tags = {re.search(r"\{[^}]*\}", k).group(0) for k in keys.all}  # type: ignore[union-attr]
    assert len(tags) == 1
    assert keys.meta.startswith("brain:{") and keys.meta.endswith("}:meta")
    assert BrainMemory.to_redis_key("brain", "u:*{}", "chat\n1") == keys.base


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "must not be empty"),
        (b"", "must not be empty"),
        (42, "must be str or bytes"),
        ("x" * 70_000, "limited to 64 KiB"),
    ],
)
def test_bad_ids_are_rejected_clearly(value: object, message: str) -> None:
    with pytest.raises(InputError, match=message):
        encode_id(value)  # type: ignore[arg-type]


def test_long_ids_are_hashed_and_non_utf8_accepted() -> None:
    assert encode_id("x" * 10_000).startswith("h") and len(encode_id("x" * 10_000)) == 65
    assert encode_id(b"\xff\xfe") != encode_id("\xff\xfe")
    assert encode_id("\udcff")  # lone surrogates (os.fsdecode of bad bytes) are encodable
