"""The Python client of `brain serve` (README, "Python client"): memories, a chat, its streamed answer.

Run: brain keys create --user alice --name script   (prints bk_...), brain serve --port 8080, then
BRAIN_API_KEY=bk_... python examples/client.py   (BRAIN_URL for another server)
"""

import os

from brain.client import BrainClient
from brain.wire import ChatReply

with BrainClient(os.environ.get("BRAIN_URL", "http://localhost:8080"), os.environ["BRAIN_API_KEY"]) as brain:
    print(brain.me().user)
    brain.add_memory("Alice moved to Lisbon in March.", infer=False)  # stored as is (infer: extracted)
    for fact in brain.search("where does Alice live", limit=3):
        print(fact.text, fact.created_at.isoformat())  # times are UTC datetimes
    reply = brain.chat("Where do I live now?", chat_id="trip")
    assert isinstance(reply, ChatReply)  # oversize="archive" answers Archived instead
    print(reply.text)
    for event in brain.chat_stream("And since when?", chat_id="trip"):
        print(event.text if event.kind == "delta" else "\n", end="", flush=True)
