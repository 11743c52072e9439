"""A writer and a reviewer working in rounds until done, within a token budget.

Run: OPENAI_API_KEY=sk-... python examples/pipeline.py   (the same pipeline as YAML:
brain run config/writer-reviewer.yaml)
"""

from actions import PromptAction
from brain import OpenAILLM, load_settings, run_sync
from roles import Role, Team


async def main() -> None:
    settings = load_settings()
    async with OpenAILLM.from_settings(settings.llm) as llm:
        writer = Role(
            llm=llm,
            name="Writer",
            profile="A concise writer",
            watch=["UserRequirement"],
            actions=[PromptAction("Write", "Write a four-line poem on the topic. Output only the poem.")],
        )
        reviewer = Role(
            llm=llm,
            name="Reviewer",
            profile="A kind critic",
            watch=["Write"],
            actions=[PromptAction("Review", "Give one sentence of feedback on the poem.")],
        )
        team = Team(budget_tokens=10_000)
        team.hire([writer, reviewer])
        result = await team.run("Autumn in Oslo", n_round=4)
        for message in result.history:
            print(f"[{message.sent_from}] {message.content}\n")
        print(result.message)


if __name__ == "__main__":
    run_sync(main())
