"""`TieredMode`: MemGPT's idea as a mode of the turn engine. The model manages its own memory with tools:
core memory blocks always in view, archival memory and recall memory (every past turn) searchable.

The system message starts with the persona and instructions, which never change (provider prompt caching
keeps working), and ends with the memory section (`actions.memory_section`): core blocks, summary, facts and
what this turn's memory searches found, all as data; a search's tool turn only says where its result is.
Tool steps chain through `request_heartbeat` up to `memory.max_tool_steps`; what the model says through
`send_message` streams as it arrives. Every step (calls with their arguments, inner thoughts, results) is
kept with the turn (`brain.memory.steps`) and given back to the model in later turns within the window.
The prompt is fitted to the context window (oldest turns out first, tool calls with their results) and
the model is warned when it passes `memory.pressure_share` of the window.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any, ClassVar

from actions.memgpt import MEMGPT_INSTRUCTIONS, SEARCH_TOOLS, SEND_MESSAGE, search_result, stream_step
from actions.memory_section import MemoryItem, core_block_items, render_memory
from actions.talk import memory_items, render_system, render_talk
from brain.errors import ConfigError, LLMError
from brain.keys import agent_scope, shared_scope, tenant_scope, user_scope
from brain.llm.protocol import ChatMessage, Completion
from brain.memory.brain_memory import BrainMemory
from brain.memory.context import fit_prompt, pressure_note, prompt_tokens
from brain.memory.core import Block, Place, tenant_blocks
from brain.memory.graph import graph_links
from brain.memory.recall import recall_doc
from brain.memory.steps import kept_steps
from brain.message import Message
from brain.progress import Progress, report
from brain.runtime import Runtime
from brain.search.analysis import searchable
from roles.access import PASSAGE_AGENT, agent_of, passage_agent, tenant_of
from roles.memory_tools import MemoryTools
from roles.modes.brain import BrainMode
from roles.turn import Host, Turn

__all__ = ["DEFAULT_BLOCKS", "MEMGPT_INSTRUCTIONS", "TieredMode", "recall_doc"]

_log = logging.getLogger("brain.tiered")

DEFAULT_BLOCKS = (
    Block(
        label="persona",
        value="I am a helpful assistant who remembers.",
        limit=2_000,
        description="who you are",
    ),
    Block(label="human", value="", limit=2_000, description="what you know about the user"),
)


class TieredMode(BrainMode):
    """MemGPT memory tiers, stored in the runtime's backend (`runtime.tiers`). `blocks` are the core blocks'
    templates; `shared_blocks` maps a label to the name of a scope whose block is the label's default (its
    seed, stored by an operator or an agent file) for every agent that names it.

    Every block is per tenant: a user sees the defaults until they first edit a block, which copies it into
    their own keys (`brain.memory.core.edit_block`); a persona copy is the user's with this agent, a shared
    block's copy is shared by the user's agents naming the same scope. No tool call changes a default or
    another user's block, and erasing the user removes their copies."""

    name: ClassVar[str] = "tiered"

    def __init__(
        self, *, blocks: Sequence[Block] = DEFAULT_BLOCKS, shared_blocks: dict[str, str] | None = None
    ) -> None:
        self.blocks = tuple(blocks)
        self.shared_blocks = dict(shared_blocks or {})

    def check(self, runtime: Runtime) -> None:
        if runtime.tiers is None:
            raise ConfigError(
                "memory.mode tiered keeps core, archival and recall memory in a backend; it needs one"
            )

    def places(self, host: Host, user_id: str | bytes, agent: str | None = None) -> dict[str, Place]:
        """Each block of `user_id` with this agent: where the user's own copy lives (persona: the user's
        with this agent; shared blocks: the user's with the shared scope; the others: the user's) and its
        default (the template; a shared block's seed first). Under an `agent` scope (an API key's: its chats
        are `roles.access` agent chats) every copy is that agent's alone (`roles.access.tenant_of`)."""
        templates = {b.label: b for b in self.blocks}

        def own(scope: bytes) -> bytes:
            return tenant_scope(user_id, tenant_of(agent, scope))

        mine = user_scope(user_id) if agent is None else own(user_scope(user_id))
        places = {b.label: Place(scope=mine, template=b) for b in self.blocks}
        places["persona"] = Place(
            scope=own(agent_scope(host.persona.name)), template=templates.get("persona")
        )
        for label, name in self.shared_blocks.items():
            seed = shared_scope(name)
            places[label] = Place(scope=own(seed), template=templates.get(label), seed=seed)
        return places

    def scopes(self, host: Host, user_id: str | bytes, agent: str | None = None) -> dict[str, bytes]:
        """Where the user's own copy of each block lives (`places`)."""
        return {label: place.scope for label, place in self.places(host, user_id, agent).items()}

    def stored_scopes(self, host: Host, user_id: str | bytes, agent: str | None = None) -> list[bytes]:
        """Every scope the user's blocks are read from: their own copies' and the shared blocks' seeds."""
        places = self.places(host, user_id, agent).values()
        return sorted({p.scope for p in places} | {p.seed for p in places if p.seed is not None})

    def tools(
        self, host: Host, user_id: str | bytes, chat_id: str | bytes, asked_at: float | None = None
    ) -> MemoryTools:
        """The memory tools of a turn in `chat_id` asked at `asked_at` (its searches resolve "yesterday"
        against it; None: now); in an agent's chat, the passages the model stores are the agent's, and
        its archival search sees the user's shared passages and the agent's own
        (`roles.access.passage_sees`)."""
        tiers, agent = host.tiers, agent_of(chat_id)
        return MemoryTools(
            tiers.core,
            self.places(host, user_id, agent_of(chat_id)),
            tiers.archival(user_id),
            tiers.recall(user_id, chat_id),
            embed=tiers.embed,
            linked=lambda query, vector: self.linked_turns(host, user_id, query, vector, chat_id),
            graph=(lambda entity, as_of: self.graph_lookup(host, user_id, entity, as_of))
            if host.memory_settings.graph.enabled
            else None,
            passage_metadata={PASSAGE_AGENT: agent} if agent else None,
            visible=(lambda doc: passage_agent(doc) in (None, agent)) if agent else None,
            asked_at=asked_at,
        )

    async def linked_turns(
        self,
        host: Host,
        user_id: str | bytes,
        query: str,
        vector: Sequence[float] | None = None,
        chat_id: str | bytes | None = None,
    ) -> list[str]:
        """The turns that the user's current facts matching `query` were learned from (none when facts
        are off), so that conversation search finds a turn through what was learned from it; with graph
        memory, also the turns linked to what the query and the chat's best hits are about
        (`graph_links`)."""
        memory, linked, tiers = host.memory_settings, [], host.tiers
        found = []
        if memory.facts.enabled:
            found = await tiers.facts.search(user_id, query, limit=5, vector=vector)
            linked = [turn for fact in found for turn in fact.source_turns]
        if memory.graph.enabled and chat_id is not None:
            seeds = [f.id for f in found]
            if memory.graph.seeds and searchable(query):
                hits, _ = await tiers.recall(user_id, chat_id).search(
                    query, limit=memory.graph.seeds, vector=vector, ids_only=True
                )
                seeds = [h.doc.id for h in hits] + seeds
            linked += await graph_links(tiers.graph, user_id, query, seeds, memory.graph)
        return list(dict.fromkeys(linked))

    async def graph_lookup(
        self, host: Host, user_id: str | bytes, entity: str, as_of: float | None
    ) -> dict[str, Any]:
        """What graph memory holds about `entity` (by name or alias): its relations, current or as of a
        moment, each as "A -relation-> B"."""
        graph = host.tiers.graph
        found = await graph.resolve(user_id, [entity])
        if not found:
            return {"entity": entity, "found": False}
        centre = next(iter(found.values()))
        around = await graph.neighbourhood(
            user_id, [centre], as_of=as_of, limit=host.memory_settings.graph.neighbours or 20
        )
        known = around.entities.get(centre)
        return {
            "entity": known.name if known else entity,
            "type": known.type if known else "thing",
            "aliases": list(known.aliases) if known else [],
            "relations": around.lines(),
        }

    async def core_blocks(self, host: Host, user_id: str | bytes, agent: str | None = None) -> list[Block]:
        """The blocks in view for `user_id` (as `agent`, an API key's agent) with this assistant: their own
        copies, else the defaults (persona included). Writes nothing."""
        return await tenant_blocks(host.tiers.core, self.places(host, user_id, agent))

    async def refine(self, host: Host, memory: BrainMemory) -> str | None:
        """As brain mode does, and also: index turns recall memory has not seen (written in brain mode or
        by another process), and summarize before the prompt would overflow the window."""
        await self.sync_recall(host, memory)
        core = core_block_items(await self.core_blocks(host, memory.user_id, agent_of(memory.chat_id)))
        head = host.tokenizer.count(render_memory(core)) + 600
        if memory.window_tokens + head + host.memory_settings.reply_tokens > host.context_window:
            await host.summarize(memory)
        return await super().refine(host, memory)

    async def take_back(self, host: Host, memory: BrainMemory, n: int) -> list[Message]:
        """As brain mode does; the turns also leave recall memory."""
        taken = await super().take_back(host, memory, n)
        recall = host.tiers.recall(memory.user_id, memory.chat_id)
        for message in taken:
            await recall.delete(message.id)
        return taken

    async def written(self, host: Host, memory: BrainMemory, progress: Progress | None = None) -> None:
        await self.sync_recall(host, memory, progress)

    async def sync_recall(self, host: Host, memory: BrainMemory, progress: Progress | None = None) -> int:
        """Index the stored turns recall memory has not seen yet (with vectors when embeddings are on):
        turns of this process, of other processes, or written before the tiered mode. Returns how many.
        `progress` is told the turns indexed (a backfill of many turns: an import, a switch to tiered)."""
        tiers = host.tiers
        recall = tiers.recall(memory.user_id, memory.chat_id)
        marker = await recall.get_source("turns") or {"upto": 0}
        upto, added = int(marker["upto"]), 0
        if upto > memory.turn_count:  # the chat was deleted and started again behind recall's back
            await recall.drop()
            upto = 0
        first, task = upto, "indexing for recall"
        report(progress, task, 0, memory.turn_count - first, "turns")
        while upto < memory.turn_count:
            turns = await memory.read_history(upto + 1, 500)
            if not turns:
                break
            docs = [recall_doc(t.message, t.seq) for t in turns if not t.hidden and not t.dropped]
            vectors = (
                await tiers.embed([recall.indexed_text(d) for d in docs])
                if tiers.embed is not None and docs
                else None
            )
            added += await recall.add_many(docs, vectors)
            upto = turns[-1].seq
            await recall.set_source("turns", {"upto": upto})
            report(progress, task, upto - first, memory.turn_count - first, "turns")
        return added

    async def answer(self, host: Host, turn: Turn) -> AsyncIterator[str]:
        memory, settings, window = turn.memory, host.memory_settings, host.context_window
        tools = self.tools(host, memory.user_id, memory.chat_id, asked_at=time.time())
        facts = await host.recalled_facts(memory.user_id, turn.query, memory.chat_id)
        found: list[MemoryItem] = []  # what this turn's memory searches found

        async def system() -> ChatMessage:
            """The system message: instructions, then the memory section (core blocks as they are now)."""
            core = core_block_items(await self.core_blocks(host, memory.user_id, agent_of(memory.chat_id)))
            recalled = memory_items(memory.get_knowledge(), memory.historical_summary, facts, [*core, *found])
            return render_system(host.persona, recalled, MEMGPT_INSTRUCTIONS)

        base = render_talk(
            persona=host.persona,
            text=turn.text,
            resolved=turn.resolved,
            tokenizer=host.tokenizer,
            history_budget=int(window * settings.prompt_history_share),
            history=memory.history,
            history_tokens=memory.history_tokens,
        )
        messages = [await system(), *base[1:]]
        specs = tools.specs + host.skills.specs
        for step in range(settings.max_tool_steps + 1):
            if step:  # memory edits and search results show up in the next step's memory section
                messages[0] = await system()
            prompt = _fit(host, messages, 1)
            said: dict[int, str] = {}
            completion: Completion | None = None
            last = step == settings.max_tool_steps
            async for event in stream_step(
                host.llm, prompt, () if last else specs, said, separate=bool(turn.pieces)
            ):
                if isinstance(event, Completion):
                    completion = event
                    turn.spend(event)
                else:
                    yield event
            assert completion is not None
            if not completion.tool_calls:
                break
            messages.append(completion.as_message())
            turn.trail.append(messages[-1])  # kept with the turn (`steps`)
            heartbeat = False
            for index, call in enumerate(completion.tool_calls):
                if tools.handles(call.name):
                    outcome = await tools.invoke(call)
                    heartbeat |= outcome.heartbeat
                    result = outcome.result
                    if call.name in SEARCH_TOOLS and not outcome.failed:
                        item, result = search_result(call.name, result, len(found) + 1)
                        found.append(item)
                    streamed = said.get(index, "")
                    if outcome.message is not None and outcome.message.startswith(streamed):
                        rest = outcome.message[len(streamed) :]
                        if rest:  # what the stream could not show as it came
                            yield ("\n\n" if turn.pieces and not streamed else "") + rest
                else:
                    result, heartbeat = await host.skills.invoke(call), True
                messages.append(ChatMessage(role="tool", tool_call_id=call.id, content=result))
                turn.trail.append(messages[-1])
            if not heartbeat and "".join(turn.pieces).strip():
                break  # without a word to the user yet, the model gets another step (the last has no tools)
        if not "".join(turn.pieces).strip():
            raise LLMError(f"{host.llm.model}: the turn ended without a message to the user")

    def steps(self, host: Host, turn: Turn) -> list[Message]:
        """Every tool round of the turn, with its inner thoughts and results; `send_message` is the answer
        itself, stored as such."""
        hidden = frozenset({SEND_MESSAGE})
        return kept_steps(turn.trail, sent_from=host.speaker, hidden=hidden, ids=turn.message_id)

    async def committed(self, host: Host, turn: Turn) -> None:
        await self.sync_recall(host, turn.memory)


def _fit(host: Host, messages: list[ChatMessage], head: int) -> list[ChatMessage]:
    """The prompt within the context window (oldest turns out first), with a memory-pressure warning when
    it passes `memory.pressure_share` of the window."""
    window, settings, tokenizer = host.context_window, host.memory_settings, host.tokenizer
    prompt = fit_prompt(messages, window, tokenizer, head=head, reserve=settings.reply_tokens)
    note = pressure_note(prompt_tokens(prompt, tokenizer), window, settings.pressure_share)
    if note is None:
        return prompt
    return fit_prompt(
        [*prompt[:head], note, *prompt[head:]],
        window,
        tokenizer,
        head=head + 1,
        reserve=settings.reply_tokens,
    )
