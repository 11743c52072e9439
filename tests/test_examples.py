"""The README's "Use it from your framework" and "Python client" examples run as written: each is a script
in `examples/` (the README shows it whole, less its docstring), run here in a fresh process against a
scripted model and a real Redis, or the served app; what it prints and what the model was sent are checked."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from brain.testing import ScriptedLLM
from tests.roles.service.conftest import served_with, settings_for
from tests.support.openai_server import Chat, ScriptedOpenAIServer

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
MAIN = 'if __name__ == "__main__":\n    '


def shown(name: str) -> str:
    """What the README shows of `examples/<name>`: the script less its docstring and `__main__` guard."""
    text = (EXAMPLES / name).read_text(encoding="utf-8")
    body = re.sub(r'\A""".*?"""\n+', "", text, flags=re.DOTALL)
    return body.replace(MAIN, "").strip()


def run(name: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name)], capture_output=True, text=True, timeout=120, env=env, cwd=ROOT
    )


@pytest.fixture
def env(openai_server: ScriptedOpenAIServer, redis_server_url: str) -> dict[str, str]:
    """The environment an example reads: a scripted model, an emptied Redis."""
    with redis.Redis.from_url(redis_server_url) as client:
        client.flushdb()
    return {
        **os.environ,
        "OPENAI_BASE_URL": openai_server.url,
        "OPENAI_API_KEY": "sk-test",
        "BRAIN_REDIS_URL": redis_server_url,
        "PYTHONPATH": str(ROOT),
    }


@pytest.mark.parametrize(
    "name", ["openai_agents.py", "langgraph_store.py", "llamaindex_memory.py", "adk_memory.py", "client.py"]
)
def test_the_readme_shows_each_example_whole(name: str) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [b.strip() for b in re.findall(r"```python\n(.*?)```", readme, re.DOTALL)]
    assert shown(name) in blocks, f"README lacks examples/{name} as a python block"


def test_openai_agents_example(openai_server: ScriptedOpenAIServer, env: dict[str, str]) -> None:
    pytest.importorskip("agents")
    openai_server.script(
        Chat(None, tool_calls=(("search_memory", {"query": "passport"}),), finish_reason="tool_calls"),
        Chat("In the blue drawer."),
        Chat("Where your passport is."),
    )
    result = run("openai_agents.py", env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "In the blue drawer.\nWhere your passport is.\n"
    sent = [r.body["messages"] for r in openai_server.chat_requests()]
    assert "The passport is in the blue drawer." in sent[1][-1]["content"]  # the tool's answer
    assert [m["role"] for m in sent[2]] == ["user", "assistant", "tool", "assistant", "user"]  # the session


def test_langgraph_example(openai_server: ScriptedOpenAIServer, env: dict[str, str]) -> None:
    pytest.importorskip("langgraph.store.base")
    openai_server.script(Chat("Oolong tea."))
    result = run("langgraph_store.py", env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Oolong tea.\n"
    system = openai_server.chat_requests()[0].body["messages"][0]["content"]
    assert system.endswith("Alice drinks oolong tea, never coffee.")


def test_llamaindex_example(openai_server: ScriptedOpenAIServer, env: dict[str, str]) -> None:
    pytest.importorskip("llama_index.core.memory")
    openai_server.script(Chat("Noted."), Chat("A mushroom risotto."))
    result = run("llamaindex_memory.py", env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Noted.\nA mushroom risotto.\n"
    second = openai_server.chat_requests()[1].body["messages"]
    assert [(m["role"], m["content"]) for m in second] == [
        ("user", "I'm vegetarian."),
        ("assistant", "Noted."),
        ("user", "What should I cook tonight?"),
    ]


def test_adk_example(env: dict[str, str]) -> None:
    pytest.importorskip("google.adk.memory")
    result = run("adk_memory.py", env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "user My sister Lena lives in Porto.\n"


async def test_client_example(redis_server_url: str) -> None:
    rewrite = {"related": True, "rewritten": "Since when do I live in Lisbon?"}  # the follow-up, refined
    llm = ScriptedLLM(["Lisbon.", json.dumps(rewrite), "Since March."])
    async with served_with(llm, settings_for(), redis_server_url) as served:
        key = await served.key("alice")
        env = {**os.environ, "BRAIN_URL": served.url, "BRAIN_API_KEY": key, "PYTHONPATH": str(ROOT)}
        result = await asyncio.to_thread(run, "client.py", env)  # the server answers meanwhile
        assert result.returncode == 0, result.stderr
        user, fact, *answers = result.stdout.splitlines()
        assert user == "alice" and answers == ["Lisbon.", "Since March."]
        text, _, moment = fact.rpartition(" ")
        assert text == "Alice moved to Lisbon in March." and moment.endswith("+00:00")  # ISO 8601, UTC
        asked = [m.content or "" for call in llm.calls for m in call.messages if m.role == "user"]
        assert asked[-1].startswith("And since when?") and "Since when do I live in Lisbon?" in asked[-1]
    llm.assert_consumed()
