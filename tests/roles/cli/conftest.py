"""CLI tests script every LLM call of a session. Fact extraction (on by default; a session's last turns are
applied when it exits) has tests of its own, so here it is off unless a test turns it on
(`--set memory.facts.enabled=true`) or runs with the defaults (`with_defaults(env)`)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def facts_off_unless_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "cli-tests.yaml"
    config.write_text("memory:\n  facts:\n    enabled: false\n", encoding="utf-8")
    monkeypatch.setenv("BRAIN_CONFIG", str(config))
