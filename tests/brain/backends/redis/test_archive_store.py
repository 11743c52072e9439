"""The cold archive's file format and stores (pure, and a local folder)."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from brain.backends.redis import RedisBackend
from brain.backends.redis.archive_store import (
    ArchivedKey,
    DirectoryStore,
    FsspecStore,
    pack,
    store_for,
    unpack,
)
from brain.errors import ConfigError, StoreError
from brain.keys import archive_name, archived_key, key_family, user_patterns
from brain.message import Message
from brain.settings import MemorySettings, Settings
from brain.storage.conversation import Conversation, WriteBatch


def test_an_archive_gives_back_every_key_byte_for_byte() -> None:
    keys = [
        ArchivedKey(name="p:{bYQ}:meta", payload=b"\x00\xff" * 40),
        ArchivedKey(name="p:{r.bYQ.bYw}:post:é", expires_at_ms=1_900_000_000_000, payload=b"x" * 5_000),
    ]
    data = pack(keys)
    assert unpack(data) == keys and len(data) < 1_000  # compressed
    with pytest.raises(StoreError, match="corrupt"):
        unpack(data[:-9])
    with pytest.raises(StoreError, match="not a brain-assistant archive"):
        unpack(zlib.compress(b"something else"))


def test_the_marker_is_the_users_own_and_the_file_name_spells_no_id() -> None:
    marker = archived_key("p", "ann")
    assert marker in user_patterns("p", "ann") and key_family(marker) == "archive"
    assert marker != archived_key("p", "bob") and archived_key("q", "ann") != marker
    name = archive_name("p", "ann")
    assert "ann" not in name and name != archive_name("q", "ann") and name == archive_name("p", b"ann")


def test_stores_by_settings(tmp_path: Path) -> None:
    home = Settings(home=tmp_path)
    assert isinstance(store := store_for(home), DirectoryStore) and store.folder == tmp_path / "archive"
    by_url = Settings(memory=MemorySettings(archive_url=f"file://{tmp_path}/cold"))
    assert store_for(by_url).where == f"{tmp_path}/cold"
    with pytest.raises(ConfigError, match="fsspec"):
        store_for(Settings(memory=MemorySettings(archive_url="s3://bucket/cold")))
    folder = DirectoryStore(tmp_path / "a")
    folder.put("u1.brain-archive", b"data")
    assert folder.get("u1.brain-archive") == b"data"
    assert (tmp_path / "a").stat().st_mode & 0o777 == 0o700
    assert folder.delete("u1.brain-archive") and not folder.delete("u1.brain-archive")
    with pytest.raises(StoreError, match="cannot read"):
        folder.get("u1.brain-archive")


def test_an_archive_in_object_storage_by_url() -> None:
    """Any other URL is fsspec's: here its in-memory filesystem stands for a bucket."""
    store = store_for(Settings(memory=MemorySettings(archive_url="memory://bucket/cold")))
    assert isinstance(store, FsspecStore) and store.where == "memory://bucket/cold"
    store.put("u1.brain-archive", b"data")
    assert store.get("u1.brain-archive") == b"data"
    assert store.delete("u1.brain-archive") and not store.delete("u1.brain-archive")
    with pytest.raises(StoreError, match="cannot read"):
        store.get("u1.brain-archive")
    with pytest.raises(StoreError, match="bad archive file name"):
        store.put("../escape", b"x")
    with pytest.raises(ConfigError, match="fsspec cannot open it"):
        store_for(Settings(memory=MemorySettings(archive_url="nosuchscheme://bucket")))


async def test_a_user_archived_to_object_storage_comes_back(redis_client: aioredis.Redis) -> None:
    store = FsspecStore("memory://bucket/users")
    backend = RedisBackend(redis_client, prefix="obj", archive_store=store)
    conv = Conversation(user_id="ann", chat_id="c")
    await backend.conversations.write(conv, WriteBatch(turns=((Message(content="I live in Oslo."), 5),)))
    before = await backend.user_leftovers("ann")
    assert (await backend.archive.archive("ann")).archived
    assert await backend.user_leftovers("ann") == [archived_key("obj", "ann")]
    assert store.get(archive_name("obj", "ann"))  # the file is in the bucket
    assert await backend.archive.present("ann")
    assert await backend.user_leftovers("ann") == before
    assert [t.message.content for t in await backend.conversations.read_turns(conv, 1, 5)] == [
        "I live in Oslo."
    ]
    assert not store.delete(archive_name("obj", "ann"))  # brought back: the file is gone
