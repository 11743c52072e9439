"""Adapters that give agent frameworks brain-assistant's memory: one module per framework, each imported
only by whoever uses it (the framework is an optional extra, never needed by the base install):

- `roles.integrations.openai_agents`: an OpenAI Agents SDK `Session` on a brain chat, and memory search as a
  function tool (`brain-assistant[agents]`);
- `roles.integrations.langgraph_store`: a LangGraph `BaseStore` on a search index (`[langgraph]`);
- `roles.integrations.llamaindex_memory`: a LlamaIndex `BaseMemory` on a brain chat (`[llamaindex]`);
- `roles.integrations.adk_memory`: a Google ADK `BaseMemoryService` on archival memory (`[adk]`).

Each adapter holds only what it was built with (a runtime, ids); every call reads and writes the store."""

__all__: list[str] = []
