"""Dead letters over HTTP and in the inspector: a key sees those of its own chats only (an agent key its
agent's, a user-wide key the user's chats of no agent), with what the model answered."""

from __future__ import annotations

from playwright.async_api import Browser, expect

from brain.backends.redis import RedisBackend
from roles.access import agent_chat
from tests.roles.service.conftest import Served
from tests.roles.service.test_inspector import _open, browser  # noqa: F401  (browser: a fixture)


async def _parked(served: Served, user: str, agent: str | None, chat: str, said: str) -> str:
    """A key for (`user`, `agent`) whose chat `chat` has a dead letter quoting `said`."""
    secret = await served.key(user, agent)
    served.llm.add("Noted.")
    async with served.client(secret) as http:
        turn = await http.post("/v1/chat", json={"chat_id": chat, "text": said, "stream": False})
        assert turn.status_code == 200, turn.text
    queue = RedisBackend(served.redis, prefix="svc").queue
    entries = await queue.read("test", 100, None)
    await queue.park(entries, f"no JSON in the reply: {said!r}", 3)
    return secret


async def test_a_key_sees_the_dead_letters_of_its_own_chats_only(served: Served) -> None:
    own = await _parked(served, "ann", None, "trip", "ANN-OWN plans")
    writer = await _parked(served, "ann", "writer", "draft", "ANN-WRITER draft")
    bob = await _parked(served, "bob", None, "trip", "BOB-OWN plans")
    stored = [(d.user_id, d.chat_id) for d in await RedisBackend(served.redis, prefix="svc").queue.parked()]
    assert [(u, agent_chat(c) or c) for u, c in stored] == [
        ("ann", "trip"),
        ("ann", ("writer", "draft")),
        ("bob", "trip"),
    ]
    seen = {}
    for name, secret in (
        ("own", own),
        ("writer", writer),
        ("bob", bob),
        ("coder", await served.key("ann", "coder")),
    ):
        async with served.client(secret) as http:
            answer = await http.get("/v1/dead-letters")
            assert answer.status_code == 200, answer.text
            seen[name] = [(d["chat_id"], d["attempts"], d["reason"]) for d in answer.json()]
    assert seen == {
        "own": [("trip", 3, "no JSON in the reply: 'ANN-OWN plans'")],
        "writer": [("draft", 3, "no JSON in the reply: 'ANN-WRITER draft'")],
        "bob": [("trip", 3, "no JSON in the reply: 'BOB-OWN plans'")],
        "coder": [],
    }
    async with served.client() as anonymous:
        assert (await anonymous.get("/v1/dead-letters")).status_code == 401


async def test_the_inspector_shows_the_keys_dead_letters(served: Served, browser: Browser) -> None:  # noqa: F811
    ann = await _parked(served, "ann", None, "trip", "ANN-OWN plans")
    await _parked(served, "bob", None, "trip", "BOB-OWN plans")
    page = await _open(browser, served, ann)
    rows = page.locator("#dead tbody tr")
    await expect(rows).to_have_count(1)
    await expect(rows.first).to_contain_text("ANN-OWN plans")
    await expect(rows.first).to_contain_text("trip")
    assert "BOB-OWN" not in await page.content()
    page = await _open(browser, served, await served.key("cy"))
    await expect(page.locator("#dead")).to_have_text("No dead letters.")
