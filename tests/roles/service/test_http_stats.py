"""`GET /v1/stats` with real HTTP clients against uvicorn, over real Redis: what the key's user's memory
costs per family and in all, with the fact queue's counters; and a rollback of a trimmed audit event."""

from __future__ import annotations

from brain.backends.redis import RedisBackend
from brain.backends.redis.stats import storage_costs
from brain.memory.facts import Fact
from brain.memory.tiers import Tiers
from tests.roles.service.conftest import Served


async def test_a_user_key_sees_its_users_costs_and_the_queue_counters(served: Served) -> None:
    ann, bob = await served.key("ann"), await served.key("bob")
    async with served.client(bob) as http:
        await http.post("/v1/memories", json={"text": "Bob rides a red bicycle to work", "infer": False})
    async with served.client(ann) as http:
        await http.post("/v1/memories", json={"text": "Ann lives in Lisbon", "infer": False})
        turns = [{"role": "user", "content": "I adopted a cat"}, {"role": "assistant", "content": "Nice!"}]
        assert (await http.post("/v1/memories", json={"messages": turns})).status_code == 202
        response = await http.get("/v1/stats")
        assert response.status_code == 200
        report = response.json()
        assert (await http.get("/v1/stats", params={"user": "bob"})).status_code == 400
    families = {f["family"]: f for f in report["families"]}
    assert {"facts", "facts.audit", "conversation"} <= set(families)
    assert report["keys"] == sum(f["keys"] for f in report["families"]) > 0
    assert report["bytes"] == sum(f["bytes"] for f in report["families"]) > 0
    backend = RedisBackend(served.redis, prefix="svc")
    direct = {c.family: (c.keys, c.bytes) for c in await storage_costs(backend, "ann")}
    assert {k: (f["keys"], f["bytes"]) for k, f in families.items()} == direct  # ann's only, not bob's
    queue = report["queue"]
    assert (queue["backlog"], queue["max_len"], queue["dead_letters_max"]) == (1, 10_000, 1_000)
    assert (queue["deferred"], queue["dropped"], queue["dead_trimmed"]) == (0, 0, 0)


async def test_an_agent_key_is_refused(served: Served) -> None:
    async with served.client(await served.key("ann", agent="helper")) as http:
        response = await http.get("/v1/stats")
    assert response.status_code == 403 and "user-wide key" in response.json()["detail"]


async def test_a_rollback_of_a_trimmed_event_says_so(served: Served) -> None:
    tiers = Tiers(RedisBackend(served.redis, prefix="svc", audit_max_events=100))
    await tiers.facts.add("ann", Fact(text="Ann's fact number 0"))
    [first] = await tiers.facts.history("ann")
    for n in range(1, 250):
        await tiers.facts.add("ann", Fact(text=f"Ann's fact number {n}"))
    async with served.client(await served.key("ann")) as http:
        trimmed = await http.post(f"/v1/history/{first.id}/rollback")
        unknown = await http.post("/v1/history/99999999999999-0/rollback")
    assert trimmed.status_code == 404 and "trimmed" in trimmed.json()["detail"]
    assert (
        unknown.status_code == 404
        and unknown.json()["detail"] == "there is no memory event with this event_id"
    )
