"""LlamaIndex's chat memory kept as a brain chat (`pip install 'brain-assistant[llamaindex]'`; README, "Use
it from your framework"): `aget` gives what fits the token limit, after the chat's summary.

Run: OPENAI_API_KEY=sk-... python examples/llamaindex_memory.py
(the model brain is configured with answers). Memory goes to BRAIN_REDIS_URL, or the embedded Valkey.
"""

from llama_index.core.llms import ChatMessage

from brain import ChatMessage as Prompt
from brain import load_settings, open_runtime, run_sync
from roles.integrations.llamaindex_memory import BrainChatMemory


async def main() -> None:
    async with open_runtime(load_settings()) as runtime:
        memory = BrainChatMemory.from_defaults(
            runtime=runtime, user_id="alice", chat_id="cooking", token_limit=2_000
        )
        for text in ("I'm vegetarian.", "What should I cook tonight?"):
            await memory.aput(ChatMessage(role="user", content=text))
            history = await memory.aget()  # what a LlamaIndex agent reads: agent.run(..., memory=memory)
            reply = await runtime.llm.complete(
                [Prompt(role=m.role.value, content=m.content) for m in history]
            )
            await memory.aput(ChatMessage(role="assistant", content=reply.content))
            print(reply.content)


if __name__ == "__main__":
    run_sync(main())
