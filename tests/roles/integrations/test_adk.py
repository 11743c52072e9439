"""The Google ADK memory adapter against the real `BaseMemoryService`: a session's events become searchable
memories that come back as the events said them; adding the session again adds nothing twice."""

from __future__ import annotations

import pytest

pytest.importorskip("google.adk.memory")

from google.adk.events.event import Event
from google.adk.memory import BaseMemoryService
from google.adk.sessions.session import Session
from google.genai import types

from brain.runtime import Runtime
from roles.integrations.adk_memory import BrainMemoryService, brain_user


def _event(i: int, author: str, text: str) -> Event:
    content = types.Content(role="user" if author == "user" else "model", parts=[types.Part(text=text)])
    return Event(id=f"e{i}", invocation_id="inv", author=author, content=content, timestamp=1_700_000_000 + i)


async def test_sessions_become_searchable_memories(runtime: Runtime) -> None:
    service = BrainMemoryService(runtime)
    assert isinstance(service, BaseMemoryService)
    events = [
        _event(1, "user", "My sister Lena lives in Porto."),
        _event(2, "helper", "Noted: Lena lives in Porto."),
        _event(3, "user", "I play the cello on Sundays."),
        Event(id="e4", invocation_id="inv", author="user"),  # no content: not a memory
    ]
    session = Session(id="s1", app_name="app", user_id="ann", events=events)
    await service.add_session_to_memory(session)
    await service.add_session_to_memory(session)  # again: nothing twice
    found = await service.search_memory(app_name="app", user_id="ann", query="where does Lena live?")
    assert [m.id for m in found.memories] == ["e1", "e2"] or [m.id for m in found.memories] == ["e2", "e1"]
    first = next(m for m in found.memories if m.id == "e1")
    assert first.content == events[0].content and first.author == "user"
    assert first.custom_metadata["session_id"] == "s1"
    assert (await service.search_memory(app_name="app", user_id="bob", query="Lena")).memories == []
    assert (await service.search_memory(app_name="app", user_id="ann", query="the")).memories == []
    await service.add_events_to_memory(
        app_name="app", user_id="ann", events=[_event(5, "user", "Lena has a cello too.")]
    )
    cello = await service.search_memory(app_name="app", user_id="ann", query="cello")
    assert sorted(m.id for m in cello.memories) == ["e3", "e5"]
    await service.delete_memory(app_name="app", user_id="ann", memory_id="e5")
    cello = await service.search_memory(app_name="app", user_id="ann", query="cello")
    assert [m.id for m in cello.memories] == ["e3"]
    assert runtime.tiers is not None
    assert await runtime.tiers.archival(brain_user("app", "ann")).count() == 3
