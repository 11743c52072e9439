"""300 turns through the real client path: scripted HTTP model, real Redis, the Assistant as shipped."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from brain import Settings
from roles.assistant import Assistant
from tests.support.openai_server import Chat, Dynamic, ScriptedOpenAIServer

FACT = "Please remember: my favourite colour is teal."


def is_summary_request(body: dict[str, Any]) -> bool:
    return "condense conversation transcripts" in body["messages"][0]["content"]


def model(body: dict[str, Any]) -> Chat:
    """A model that answers briefly, and summarizes by keeping what it was asked to remember."""
    if is_summary_request(body):
        text = body["messages"][-1]["content"]
        kept = re.findall(r"remember: [^.\n]*\.", text) or ["nothing to remember"]
        return Chat("The user asked me to " + " ".join(dict.fromkeys(kept)), usage=None)
    turn = len(body["messages"])
    return Chat(f"Noted, reply {turn}.", usage=None)


async def test_fact_from_turn_3_is_in_the_prompt_at_turn_300(
    openai_server: ScriptedOpenAIServer, redis_server_url: str, tmp_path: Path
) -> None:
    openai_server.script(*[Dynamic(model)] * 400)
    settings = Settings.model_validate(
        {
            "home": str(tmp_path),
            "llm": {"base_url": openai_server.url, "api_key": "sk-test", "context_window": 2_048},
            "redis": {"url": redis_server_url},
        }
    )
    async with Assistant.from_settings(settings) as assistant:
        for turn in range(1, 301):
            text = (
                FACT if turn == 3 else f"Turn {turn}: here is some ordinary chatter about the weather today."
            )
            await assistant.chat("e2e", "long", text)
    unused = openai_server.take_unused()
    requests = openai_server.chat_requests()
    answers = [r for r in requests if not is_summary_request(r.body)]
    summaries = [r for r in requests if is_summary_request(r.body)]
    assert len(answers) == 300  # exactly one call per ordinary turn
    assert len(requests) == 300 + len(summaries) == 400 - unused
    assert 3 <= len(summaries) <= 40  # summaries only when the budget says so
    last = answers[-1].body["messages"]
    system = "\n".join(m["content"] for m in last if m["role"] == "system")
    assert "favourite colour is teal" in system  # via the summary ...
    assert all(m["content"] != FACT for m in last if m["role"] == "user")  # ... not as an old raw turn
    assert last[-1]["content"].startswith("Turn 300:")
    assert max(len(str(a.body["messages"])) for a in answers) < 2_048 * 4 * 2  # bounded prompts
