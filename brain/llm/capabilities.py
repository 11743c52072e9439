"""What an endpoint was found to accept, kept per endpoint. Apart from `brain.llm.endpoint` so that a
runtime handed its model (`open_runtime(llm=...)`) does not import the OpenAI SDK: its ~500 modules
would be walked by every full garbage collection of the host process."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from brain.settings import LLMSettings

__all__ = ["STRICTNESS", "Capabilities", "Structured", "endpoint_key"]

Structured = Literal["json_schema", "json_object", "off"]
STRICTNESS: tuple[Structured, ...] = ("json_schema", "json_object", "off")


def endpoint_key(settings: LLMSettings) -> tuple[str, str, str]:
    """What identifies an endpoint's capabilities: its kind, URL and model. Pure."""
    return (settings.api_type, settings.base_url or "https://api.openai.com/v1", settings.model)


@dataclass
class Capabilities:
    """What one endpoint (URL and model) was found to accept, learnt as requests are refused: only ever
    lowered, never raised; shared by every client of that endpoint (the runtime keeps one per
    `endpoint_key`), so what one caller learns, none has to learn again, and another endpoint is not
    touched."""

    structured_output: Structured = "json_schema"

    def accepted(self, mode: Structured) -> None:
        """`mode` worked where a stricter one was refused: ask like this from now on."""
        if STRICTNESS.index(mode) > STRICTNESS.index(self.structured_output):
            self.structured_output = mode
