"""300 turns through the real client path: scripted HTTP model, real Redis, the Assistant as shipped
(default settings: facts on, applied by the in-process worker)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from brain import Settings
from roles.assistant import Assistant
from tests.support.openai_server import Chat, Dynamic, ScriptedOpenAIServer

FACT = "Please remember: my favourite colour is teal."


def is_summary_request(body: dict[str, Any]) -> bool:
    return "condense conversation transcripts" in body["messages"][0]["content"]


def is_fact_request(body: dict[str, Any]) -> bool:
    return "memory of facts" in body["messages"][0]["content"]


def remembered(text: str) -> str:
    kept = re.findall(r"remember: [^.\n]*\.", text) or ["nothing to remember"]
    return "The user asked me to " + " ".join(dict.fromkeys(kept))


def model(body: dict[str, Any]) -> Chat:
    """A model that answers briefly, summarizes by keeping what it was asked to remember, and extracts
    the one fact there is (with the summary, when the worker folds it into the extraction)."""
    text = body["messages"][-1]["content"]
    if is_summary_request(body):
        return Chat(remembered(text), usage=None)
    if is_fact_request(body):
        assert body["response_format"]["type"] == "json_schema"  # structured output asked for
        new, _, fold = text.partition("\n\nSUMMARIZE:\n")
        facts = [{"text": "Favourite colour is teal", "category": "preferences", "valid_at": None}]
        reply: dict[str, Any] = {"facts": facts if "teal" in new else []}
        if fold:
            reply["summary"] = remembered(fold)
        return Chat(json.dumps(reply), usage=None)
    turn = len(body["messages"])
    return Chat(f"Noted, reply {turn}.", usage=None)


async def test_fact_from_turn_3_is_in_the_prompt_at_turn_300(
    openai_server: ScriptedOpenAIServer, redis_server_url: str, tmp_path: Path
) -> None:
    openai_server.script(*[Dynamic(model)] * 500)
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
        stored = await assistant.runtime.tiers.facts.all("e2e")
    assert [f.text for f in stored] == ["Favourite colour is teal"]
    unused = openai_server.take_unused()
    requests = openai_server.chat_requests()
    facts = [r for r in requests if is_fact_request(r.body)]
    answers = [r for r in requests if not is_summary_request(r.body) and r not in facts]
    summaries = [r for r in requests if is_summary_request(r.body)]
    folded = [r for r in facts if "SUMMARIZE:" in r.body["messages"][-1]["content"]]
    assert len(answers) == 300  # exactly one call per ordinary turn
    assert len(requests) == 300 + len(summaries) + len(facts) == 500 - unused
    assert 3 <= len(summaries) + len(folded) <= 40  # summaries only when the budget says so
    assert len(facts) <= 300 / 4  # batched: far fewer extractions than turns
    last = answers[-1].body["messages"]
    system = "\n".join(m["content"] for m in last if m["role"] == "system")
    assert "favourite colour is teal" in system  # via the summary ...
    assert all(m["content"] != FACT for m in last if m["role"] == "user")  # ... not as an old raw turn
    assert last[-1]["content"].startswith("Turn 300:")
    assert max(len(str(a.body["messages"])) for a in answers) < 2_048 * 4 * 2  # bounded prompts
