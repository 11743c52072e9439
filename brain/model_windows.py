"""Context windows of common model families, for `llm.context_window: null` (auto). Pure data and one
pure lookup; `brain.settings` resolves the setting with it (an endpoint's own `/models` answer, when it
gives one, is read by `brain.llm.windows` where the runtime is built)."""

from __future__ import annotations

import re

__all__ = ["CONTEXT_WINDOW_FALLBACK", "family_context_window"]

CONTEXT_WINDOW_FALLBACK = 128_000
"""The context window assumed for a model that neither the family table nor its endpoint knows."""

# Context windows in tokens by model family, as their makers publish them (native windows, without rope
# scaling; the lower one where versions differ). Keys are name prefixes, matched by `family_context_window`.
_FAMILY_WINDOWS = {
    "gpt-4o": 128_000,
    "chatgpt-4o": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4.5": 128_000,
    "gpt-4": 8_192,
    "gpt-4-32k": 32_768,
    "gpt-4-turbo": 128_000,
    "gpt-4-1106": 128_000,
    "gpt-4-0125": 128_000,
    "gpt-3.5-turbo": 16_385,
    "gpt-3.5-turbo-instruct": 4_096,
    "o1": 200_000,
    "o1-mini": 128_000,
    "o1-preview": 128_000,
    "o3": 200_000,
    "o3-mini": 200_000,
    "o4-mini": 200_000,
    "gpt-oss": 131_072,
    "qwen2": 32_768,
    "qwen2.5": 32_768,
    "qwen3": 32_768,
    "llama-2": 4_096,
    "llama-3": 8_192,
    "llama-3.1": 131_072,
    "llama-3.2": 131_072,
    "llama-3.3": 131_072,
    "deepseek-chat": 64_000,
    "deepseek-reasoner": 64_000,
    "deepseek-llm": 4_096,
    "deepseek-coder": 16_384,
    "deepseek-coder-v2": 128_000,
    "deepseek-v2": 128_000,
    "deepseek-v2-lite": 32_768,
    "deepseek-v3": 128_000,
    "deepseek-r1": 128_000,
    "glm-4": 128_000,
    "glm-4-9b-0414": 32_768,
    "glm-4-32b": 32_768,
    "glm-4v": 8_192,
    "mistral": 32_768,
    "mistral-7b-v0.1": 8_192,
    "mistral-7b-instruct-v0.1": 8_192,
    "mistral-large": 128_000,
    "mistral-large-2402": 32_768,
    "mistral-nemo": 128_000,
    "mixtral": 32_768,
    "mixtral-8x22b": 65_536,
    "gemma": 8_192,
    "gemma-2": 8_192,
    "gemma-3": 131_072,
    "gemma-3-1b": 32_768,
    "gemma-3-270m": 32_768,
    "gemma-3n": 32_768,
    "claude": 200_000,
    "claude-2": 100_000,
    "claude-2.1": 200_000,
    "claude-instant": 100_000,
    "gemini-1.5": 1_048_576,
    "gemini-2.0": 1_048_576,
    "gemini-2.5": 1_048_576,
}


def _family_key(name: str) -> str:
    """A model name as the table spells families: lower case, no organisation (`Qwen/`, `meta-llama/`),
    `-` for `:`, `_` and spaces, no `meta-` in front, no `-` between a family and its version (`llama-3.1`
    and Ollama's `llama3.1`, `gemma-2-9b` and `gemma2:9b` read alike). Pure."""
    name = re.sub(r"[\s_:]+", "-", name.strip().lower().rsplit("/", 1)[-1]).removeprefix("meta-")
    return re.sub(r"(?<=[a-z])-(?=\d)", "", name)


_FAMILIES = sorted(((_family_key(k), v) for k, v in _FAMILY_WINDOWS.items()), key=lambda kv: -len(kv[0]))


def family_context_window(model: str) -> int | None:
    """The context window of `model`'s family (`_FAMILY_WINDOWS`: the longest family prefix of its name,
    case-insensitive, e.g. `Qwen/Qwen2.5-7B-Instruct`, `qwen2.5:7b`), or None when no family matches. Pure."""
    key = _family_key(model)
    return next((tokens for prefix, tokens in _FAMILIES if key.startswith(prefix)), None)
