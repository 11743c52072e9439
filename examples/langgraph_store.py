"""A LangGraph graph whose long-term memory (its `store`) is a brain search index in Redis
(`pip install 'brain-assistant[langgraph]'`; README, "Use it from your framework").

Run: OPENAI_API_KEY=sk-... python examples/langgraph_store.py
(the node asks the model brain is configured with). Memory goes to BRAIN_REDIS_URL, or the embedded Valkey.
"""

from typing import TypedDict

from langgraph.graph import START, StateGraph
from langgraph.store.base import BaseStore

from brain import ChatMessage, load_settings, open_runtime, run_sync
from roles.integrations.langgraph_store import BrainStore


class State(TypedDict):
    question: str
    answer: str


async def main() -> None:
    async with open_runtime(load_settings()) as runtime:

        async def answer(state: State, *, store: BaseStore) -> dict[str, str]:
            found = await store.asearch(("alice", "memories"), query=state["question"], limit=3)
            notes = "\n".join(item.value["text"] for item in found)
            reply = await runtime.llm.complete(
                [
                    ChatMessage(role="system", content=f"What you know about the user:\n{notes}"),
                    ChatMessage(role="user", content=state["question"]),
                ]
            )
            return {"answer": reply.content or ""}

        store = BrainStore(runtime, "my-app")  # items are documents of one search index (BM25, + vectors)
        await store.aput(("alice", "memories"), "drinks", {"text": "Alice drinks oolong tea, never coffee."})
        graph = StateGraph(State).add_node(answer).add_edge(START, "answer").compile(store=store)
        result = await graph.ainvoke({"question": "What should I offer Alice to drink?", "answer": ""})
        print(result["answer"])


if __name__ == "__main__":
    run_sync(main())
