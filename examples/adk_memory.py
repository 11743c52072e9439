"""A Google ADK memory service on brain's archival memory (`pip install 'brain-assistant[adk]'`; README,
"Use it from your framework"): a finished session's events become memories the `load_memory` tool searches.

Run: python examples/adk_memory.py   (no model needed: ADK's Runner calls the same two methods, given
`Runner(..., memory_service=memory)`). Memory goes to BRAIN_REDIS_URL, or the embedded Valkey.
"""

from google.adk.events.event import Event
from google.adk.sessions import InMemorySessionService
from google.genai import types

from brain import load_settings, open_runtime, run_sync
from roles.integrations.adk_memory import BrainMemoryService


async def main() -> None:
    async with open_runtime(load_settings()) as runtime:
        memory = BrainMemoryService(runtime)  # the ADK user ("trips", "alice") is brain user "trips/alice"
        sessions = InMemorySessionService()
        session = await sessions.create_session(app_name="trips", user_id="alice")
        said = types.Content(role="user", parts=[types.Part(text="My sister Lena lives in Porto.")])
        await sessions.append_event(session, Event(invocation_id="i1", author="user", content=said))
        await memory.add_session_to_memory(session)  # what an ADK app does when a session ends
        found = await memory.search_memory(app_name="trips", user_id="alice", query="Where does Lena live?")
        for entry in found.memories:  # each as the event said it
            print(entry.author, *(part.text for part in entry.content.parts or []))


if __name__ == "__main__":
    run_sync(main())
