"""An OpenAI Agents SDK agent whose session is a brain chat and whose memory search is a tool
(`pip install 'brain-assistant[agents]'`; README, "Use it from your framework").

Run: OPENAI_API_KEY=sk-... python examples/openai_agents.py
(any OpenAI-compatible endpoint: OPENAI_BASE_URL and BRAIN_LLM_MODEL). Memory goes to BRAIN_REDIS_URL, or the
embedded Valkey under ~/.local/share/brain.
"""

from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner
from openai import AsyncOpenAI

from brain import load_settings, open_runtime, run_sync
from brain.search.index import IndexedDoc
from roles.integrations.openai_agents import BrainSession, memory_search_tool


async def main() -> None:
    settings = load_settings()
    async with open_runtime(settings) as runtime, AsyncOpenAI() as client:
        assert runtime.tiers is not None  # archival memory: a runtime on Redis has it
        await runtime.tiers.archival("alice").add(
            IndexedDoc(id="passport", text="The passport is in the blue drawer.")
        )
        agent = Agent(
            name="helper",
            model=OpenAIChatCompletionsModel(model=settings.llm.model, openai_client=client),
            tools=[memory_search_tool(runtime, "alice")],  # search_memory: alice's archival memory
        )
        session = BrainSession(runtime, "alice", "errands")  # the agent's history is this brain chat
        for question in ("Where is my passport?", "What did I just ask?"):
            result = await Runner.run(
                agent, question, session=session, run_config=RunConfig(tracing_disabled=True)
            )
            print(result.final_output)


if __name__ == "__main__":
    run_sync(main())
