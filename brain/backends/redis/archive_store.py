"""Where cold users' memory goes when it leaves Redis (`ArchiveStore`), and the archive's file format.

An archive is one file per user: every key's name, absolute expiry and `DUMP` payload (opaque: whatever
layout a record or an index has, it comes back byte for byte), compressed with zlib. A store keeps files
by name (`brain.keys.archive_name`); the directory store writes each file whole (a temporary file, fsync,
rename) and readable only by its owner.

Object storage: `memory.archive_url` takes `file://` URLs (a directory); other schemes need a maintained
client library (fsspec with its s3/gcs/azure drivers), which this installation does not carry: such a URL
is a `ConfigError` saying so, and any library can be plugged in as an `ArchiveStore`.
"""

from __future__ import annotations

import os
import struct
import tempfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel, ConfigDict

from brain.errors import ConfigError, StoreError
from brain.settings import Settings

__all__ = ["ArchiveStore", "ArchivedKey", "DirectoryStore", "FsspecStore", "pack", "store_for", "unpack"]

_MAGIC = b"BRAINARC1\n"
_HEAD = struct.Struct(">IqI")  # name length, absolute expiry in ms (0: none), payload length


class ArchivedKey(BaseModel):
    """One key as archived: its name, when it expires (Unix ms; 0 for never) and its `DUMP` payload."""

    model_config = ConfigDict(frozen=True)

    name: str
    expires_at_ms: int = 0
    payload: bytes


class ArchiveStore(Protocol):
    """Files by name, written whole. Blocking calls (run them in a thread)."""

    @property
    def where(self) -> str:
        """Where the files are, for messages."""
        ...

    def put(self, name: str, data: bytes) -> None:
        """Store `data` under `name` (replacing it), durably, before returning."""
        ...

    def get(self, name: str) -> bytes:
        """The file `name`; `StoreError` when it is not there or cannot be read."""
        ...

    def delete(self, name: str) -> bool:
        """Remove `name`; whether it was there."""
        ...


class DirectoryStore:
    """An `ArchiveStore` in a local (or mounted) directory, created on first use (mode 0700)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @property
    def where(self) -> str:
        return str(self.folder)

    def _path(self, name: str) -> Path:
        if not name or "/" in name or name.startswith("."):
            raise StoreError("a bad archive file name")
        return self.folder / name

    def put(self, name: str, data: bytes) -> None:
        path = self._path(name)
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(dir=self.folder, prefix=".part-")
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(data)
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(temp, path)
            except BaseException:
                Path(temp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise StoreError(f"cannot write to the cold archive in {self.folder}: {exc.strerror}") from exc

    def get(self, name: str) -> bytes:
        try:
            return self._path(name).read_bytes()
        except OSError as exc:
            raise StoreError(f"cannot read an archive in {self.folder}: {exc.strerror}") from exc

    def delete(self, name: str) -> bool:
        try:
            self._path(name).unlink()
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise StoreError(f"cannot delete an archive in {self.folder}: {exc.strerror}") from exc
        return True


class FsspecStore:
    """An `ArchiveStore` at a URL served by fsspec (object storage: s3://, gs://, az://, ... with the
    driver fsspec names for the scheme installed, e.g. s3fs; credentials as that driver finds them). A file
    is written whole in one call (an object store's put replaces an object at once)."""

    def __init__(self, url: str) -> None:
        try:
            import fsspec
        except ImportError as exc:
            raise ConfigError(
                "memory.archive_url: object storage needs fsspec (pip install 'brain-assistant[archive]') "
                "and its driver for the URL's scheme"
            ) from exc
        try:
            self._fs, root = fsspec.core.url_to_fs(url)
        except (ImportError, ValueError) as exc:  # no driver for the scheme, or a URL it cannot read
            raise ConfigError(f"memory.archive_url: fsspec cannot open it: {exc}") from exc
        self._root = root.rstrip("/")
        self._where = url

    @property
    def where(self) -> str:
        return self._where

    def _path(self, name: str) -> str:
        if not name or "/" in name or name.startswith("."):
            raise StoreError("a bad archive file name")
        return f"{self._root}/{name}"

    def put(self, name: str, data: bytes) -> None:
        try:
            self._fs.pipe_file(self._path(name), data)
        except OSError as exc:
            raise StoreError(f"cannot write to the cold archive at {self._where}: {exc}") from exc

    def get(self, name: str) -> bytes:
        try:
            return bytes(self._fs.cat_file(self._path(name)))
        except OSError as exc:
            raise StoreError(f"cannot read an archive at {self._where}: {exc}") from exc

    def delete(self, name: str) -> bool:
        path = self._path(name)
        try:
            if not self._fs.exists(path):
                return False
            self._fs.rm_file(path)
        except OSError as exc:
            raise StoreError(f"cannot delete an archive at {self._where}: {exc}") from exc
        return True


def store_for(settings: Settings) -> ArchiveStore:
    """The cold archive `settings` name: `memory.archive_url` (a file:// URL is a directory; any other is
    fsspec's), else `archive_dir`, else `<home>/archive`. `ConfigError` for a URL no installed library
    serves."""
    memory = settings.memory
    if memory.archive_url is not None:
        parts = urlsplit(memory.archive_url)
        if parts.scheme == "file" and parts.netloc in ("", "localhost"):
            return DirectoryStore(Path(unquote(parts.path)))
        if not parts.scheme:
            raise ConfigError(
                "memory.archive_url must be a URL (file://, s3://, ...); a folder is archive_dir"
            )
        return FsspecStore(memory.archive_url)
    return DirectoryStore(memory.archive_dir or settings.home / "archive")


def pack(keys: Sequence[ArchivedKey]) -> bytes:
    """One compressed archive of `keys`. Pure."""
    parts = [_MAGIC]
    for key in keys:
        name = key.name.encode("utf-8", "surrogatepass")
        parts += [_HEAD.pack(len(name), key.expires_at_ms, len(key.payload)), name, key.payload]
    return zlib.compress(b"".join(parts), 6)


def unpack(data: bytes) -> list[ArchivedKey]:
    """The keys of an archive `pack` made; `StoreError` for anything else (truncated, corrupt). Pure."""
    try:
        raw = zlib.decompress(data)
    except zlib.error as exc:
        raise StoreError(f"a corrupt archive: {exc}") from exc
    if not raw.startswith(_MAGIC):
        raise StoreError("not a brain-assistant archive")
    view, at, found = memoryview(raw), len(_MAGIC), []
    try:
        while at < len(raw):
            size, expires, length = _HEAD.unpack_from(view, at)
            at += _HEAD.size
            name = bytes(view[at : at + size]).decode("utf-8", "surrogatepass")
            payload = bytes(view[at + size : at + size + length])
            at += size + length
            if len(payload) != length:
                raise ValueError("truncated")
            # read back from what `pack` wrote: the fields are already what they say (no validation)
            found.append(ArchivedKey.model_construct(name=name, expires_at_ms=expires, payload=payload))
    except (struct.error, ValueError) as exc:
        raise StoreError(f"a corrupt archive: {exc}") from exc
    return found
