"""The embedded model standing in for an unconfigured endpoint gives the runtime its own context window."""

from __future__ import annotations

from pathlib import Path

import pytest

from brain import Settings
from brain.runtime import open_runtime

pytestmark = pytest.mark.local_model


async def test_the_embedded_models_window_is_the_runtimes(tmp_path: Path) -> None:
    settings = Settings.model_validate(
        {"home": str(tmp_path / "home"), "local": {"parallel": 1, "context_window": 4096}}
    )
    async with open_runtime(settings, redis=False) as runtime:
        assert runtime.local_model is not None
        llm = runtime.settings.llm
        assert (llm.context_window, llm.context_window_source) == (4096, "endpoint")
