"""An assistant that remembers, embedded in an application.

Run: OPENAI_API_KEY=sk-... python examples/assistant.py
(or OPENAI_BASE_URL=http://localhost:11434/v1 BRAIN_LLM_MODEL=llama3.1 for Ollama). Memory goes to the
embedded Valkey under ~/.local/share/brain unless BRAIN_REDIS_URL is set; run it twice: it remembers.
"""

from brain import load_settings, run_sync
from roles import Assistant


async def main() -> None:
    settings = load_settings()
    async with Assistant.from_settings(settings, name="Lily", profile="A friendly assistant") as assistant:
        print(await assistant.chat("alice", "example", "Hi! I'm Alice and I love hiking."))
        async for piece in assistant.chat_stream("alice", "example", "What do I love?"):
            print(piece, end="", flush=True)
        print()
        print(f"({assistant.llm.usage.totals().calls} LLM calls)")


if __name__ == "__main__":
    run_sync(main())
