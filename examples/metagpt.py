"""MetaGPT's Assistant and BrainMemory, ported by changing the imports (README, "Coming from MetaGPT").

Run: OPENAI_API_KEY=sk-... python examples/metagpt.py
(settings come from the environment and config file, as `brain` reads them; with no LLM configured, the
embedded tiny model answers). Memory goes to BRAIN_REDIS_URL, or the embedded Valkey.
"""

import asyncio

from roles.metagpt import Assistant, BrainMemory, Context, Message, TalkAction, any_to_str


async def main() -> None:
    ctx = Context.default()  # MetaGPT's Context(): config from the environment, kwargs by attribute
    ctx.kwargs.agent_description = "a travel agent"
    role = Assistant(language="English", context=ctx)
    for text in ("I fly to Oslo next Friday.", "Book hotels there for me."):
        await role.talk(text)
        while await role.think():  # refines memory (a follow-up is rewritten), picks rc.todo
            msg = await role.act()
            assert msg.cause_by == any_to_str(TalkAction)
            print(msg.content)
    role.load_memory(role.get_memory())  # the memory as JSON, and back

    key = BrainMemory.to_redis_key("brain", "ann", "notes")
    memory = BrainMemory()
    memory.add_talk(Message(content="Remember: aisle seat."))
    await memory.dumps(redis_key=key)  # no silent 30-minute expiry
    notes = await BrainMemory.loads(redis_key=key)
    print(notes.history[-1].content)
    await ctx.aclose()


if __name__ == "__main__":
    asyncio.run(main())
