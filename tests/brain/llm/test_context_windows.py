"""`llm.context_window`: set, it wins; else the model family's, else what the endpoint lists, else 128000
with one warning. Resolved once where the runtime is built; every reader gets an int."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from brain import LLMSettings, OpenAILLM, Settings, load_settings, local_runtime
from brain.llm.windows import listed_context_window
from brain.runtime import open_runtime
from brain.settings import CONTEXT_WINDOW_FALLBACK, family_context_window
from brain.testing import ScriptedLLM
from tests.support.openai_server import Fault, Payload, ScriptedOpenAIServer

ROOT = Path(__file__).parents[3]


@pytest.mark.parametrize(
    ("model", "window"),
    [
        ("gpt-4o-mini", 128_000),
        ("GPT-4o-2024-08-06", 128_000),
        ("gpt-4.1-nano", 1_047_576),
        ("gpt-4", 8_192),
        ("gpt-4-turbo", 128_000),
        ("gpt-3.5-turbo", 16_385),
        ("gpt-3.5-turbo-instruct", 4_096),
        ("o1-mini", 128_000),
        ("o3-mini", 200_000),
        ("o4-mini", 200_000),
        ("Qwen/Qwen2.5-7B-Instruct", 32_768),
        ("qwen2.5:14b", 32_768),
        ("Qwen3-8B", 32_768),
        ("meta-llama/Meta-Llama-3-8B-Instruct", 8_192),
        ("llama3:8b", 8_192),
        ("meta-llama/Llama-3.1-8B-Instruct", 131_072),
        ("llama3.2:3b", 131_072),
        ("deepseek-chat", 64_000),
        ("deepseek-ai/DeepSeek-V3", 128_000),
        ("deepseek-coder:6.7b", 16_384),
        ("THUDM/glm-4-9b-chat", 128_000),
        ("glm4:9b", 128_000),
        ("mistralai/Mistral-7B-Instruct-v0.3", 32_768),
        ("mistralai/Mistral-7B-Instruct-v0.1", 8_192),
        ("mixtral:8x7b", 32_768),
        ("mistralai/Mixtral-8x22B-Instruct-v0.1", 65_536),
        ("google/gemma-2-9b-it", 8_192),
        ("gemma3:4b", 131_072),
        ("gemma3:1b", 32_768),
        ("my-finetune", None),
        ("SmolLM2-135M-Instruct", None),
    ],
)
def test_the_family_table_matches_the_longest_family_prefix(model: str, window: int | None) -> None:
    assert family_context_window(model) == window


def test_the_setting_is_auto_by_default_and_a_number_always_wins() -> None:
    assert (Settings().llm.context_window, Settings().llm.context_window_source) == (128_000, "family")
    for auto in ({}, {"context_window": None}, {"context_window": "auto"}):
        qwen = LLMSettings.model_validate({"model": "qwen2.5:7b", **auto})
        assert (qwen.context_window, qwen.context_window_source) == (32_768, "family")
    fixed = LLMSettings.model_validate({"model": "qwen2.5:7b", "context_window": 16_000})
    assert (fixed.context_window, fixed.context_window_source) == (16_000, "setting")
    unknown = LLMSettings.model_validate({"model": "my-finetune"})
    assert (unknown.context_window, unknown.context_window_source) == (CONTEXT_WINDOW_FALLBACK, "default")
    named = Settings.model_validate({"llms": {"memory": {"model": "llama3:8b"}}})
    assert named.llm_for("memory").context_window == 8_192


def test_the_default_file_leaves_it_auto(tmp_path: Path) -> None:
    path = ROOT / "config" / "default.yaml"
    settings = load_settings(path, {"HOME": str(tmp_path)}, {"llm.model": "gemma2"})
    assert (settings.llm.context_window, settings.llm.context_window_source) == (8_192, "family")


@pytest.mark.parametrize(
    ("data", "model", "window"),
    [
        ({"object": "list", "data": [{"id": "m", "max_model_len": 32_768}]}, "m", 32_768),  # vLLM
        ({"data": [{"id": "x"}, {"id": "m", "context_length": 65_536}]}, "m", 65_536),  # OpenRouter
        ([{"id": "Org/M", "context_length": 65_536}], "org/m", 65_536),  # a bare list (Together), any case
        ({"data": [{"id": "m", "max_context_length": 8_192}]}, "m", 8_192),  # LM Studio
        ({"data": [{"id": "other", "max_model_len": 8_192}]}, "m", None),
        ({"data": [{"id": "m", "context_length": True}]}, "m", None),
        ({"data": [{"id": "m", "owned_by": "ollama"}]}, "m", None),
        ({"error": "no"}, "m", None),
    ],
)
def test_what_a_model_list_says(data: Any, model: str, window: int | None) -> None:
    assert listed_context_window(data, model) == window


def settings_for(server: ScriptedOpenAIServer, **llm: object) -> Settings:
    return Settings.model_validate({"llm": {"base_url": server.url, "api_key": "sk-test", **llm}})


async def test_the_runtime_takes_an_unknown_models_window_from_the_endpoint(
    openai_server: ScriptedOpenAIServer,
) -> None:
    listed = {"object": "list", "data": [{"id": "my-finetune", "max_model_len": 16_384}]}
    openai_server.script(Payload(listed))
    async with open_runtime(settings_for(openai_server, model="my-finetune"), redis=False) as runtime:
        llm = runtime.settings.llm
        assert (llm.context_window, llm.context_window_source) == (16_384, "endpoint")
    [request] = openai_server.requests
    assert (request.method, request.path) == ("GET", "/v1/models")


async def test_an_unknown_window_falls_back_with_one_warning(
    openai_server: ScriptedOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    openai_server.script(Fault(404, message="no such route"))
    with caplog.at_level(logging.WARNING, logger="brain.runtime"):
        async with open_runtime(settings_for(openai_server, model="my-finetune"), redis=False) as runtime:
            assert runtime.settings.llm.context_window == CONTEXT_WINDOW_FALLBACK
    [warning] = [r.getMessage() for r in caplog.records if r.name == "brain.runtime"]
    assert "my-finetune: context window unknown" in warning and "set llm.context_window" in warning
    assert len(openai_server.requests) == 1  # asked once, not retried


@pytest.mark.parametrize("llm", [{"model": "my-finetune", "context_window": 4_096}, {"model": "qwen3:8b"}])
async def test_a_set_or_known_window_asks_the_endpoint_nothing(
    openai_server: ScriptedOpenAIServer, caplog: pytest.LogCaptureFixture, llm: dict[str, Any]
) -> None:
    with caplog.at_level(logging.WARNING, logger="brain.runtime"):
        async with open_runtime(settings_for(openai_server, **llm), redis=False) as runtime:
            assert runtime.settings.llm.context_window == llm.get("context_window", 32_768)
    assert openai_server.requests == []
    assert [r for r in caplog.records if r.name == "brain.runtime"] == []


async def test_openais_own_endpoint_is_not_asked() -> None:
    async with OpenAILLM.from_settings(LLMSettings(api_key="sk-test")) as llm:
        assert await llm.listed_context_window() is None


def test_a_runtime_around_given_parts_warns_of_an_unknown_window(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="brain.runtime"):
        runtime = local_runtime(ScriptedLLM(), settings=Settings.model_validate({"llm": {"model": "zz-9"}}))
    assert runtime.settings.llm.context_window == CONTEXT_WINDOW_FALLBACK
    assert any("zz-9: context window unknown" in r.getMessage() for r in caplog.records)
