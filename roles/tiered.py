"""`TieredAssistant`: MemGPT's idea as a mode of the Assistant. The model manages its own memory with tools:
core memory blocks always in view, archival memory and recall memory (every past turn) searchable.

The system prompt never changes (provider prompt caching keeps working); core memory follows it as a
separate system message. Tool steps chain through `request_heartbeat` up to `memory.max_tool_steps`.
The prompt is fitted to the context window (oldest turns out first, tool calls with their results) and the
model is warned when it passes `memory.pressure_share` of the window.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

from actions.talk import render_talk
from brain.connection import RedisClient
from brain.context import fit_prompt, pressure_note, prompt_tokens
from brain.core_memory import Block, CoreMemory, render_blocks
from brain.errors import LLMError
from brain.llm import ChatMessage
from brain.message import Message, speaker
from brain.search_index import IndexedDoc, SearchIndex
from brain.settings import Settings
from roles.assistant import Assistant
from roles.memory_tools import MemoryTools

__all__ = ["DEFAULT_BLOCKS", "MEMGPT_INSTRUCTIONS", "TieredAssistant", "make_assistant"]

MEMGPT_INSTRUCTIONS = (
    "You have memory tools. Core memory (below) is always in view: keep what you learn about the user in the "
    "human block and about yourself in the persona block. Archival memory holds long-term passages; "
    "conversation search finds anything said before. Reply to the user with send_message. Set "
    "request_heartbeat to true when you need another step after a tool result."
)
_log = logging.getLogger("brain.tiered")


def recall_doc(message: Message) -> IndexedDoc:
    """A turn as recall memory indexes it."""
    return IndexedDoc(
        id=message.id,
        text=f"{speaker(message)}: {message.content}",
        ts=message.created_at.timestamp(),
        tags=(message.role,),
    )


DEFAULT_BLOCKS = (
    Block(
        label="persona",
        value="I am a helpful assistant who remembers.",
        limit=2_000,
        description="who you are",
    ),
    Block(label="human", value="", limit=2_000, description="what you know about the user"),
)


class TieredAssistant(Assistant):
    """An Assistant with MemGPT memory tiers, stored in the same Redis."""

    def __init__(
        self,
        *,
        core: CoreMemory,
        index_client: RedisClient,
        blocks: Sequence[Block] = DEFAULT_BLOCKS,
        shared_blocks: dict[str, str] | None = None,
        prefix: str = "brain",
        embeddings: bool = False,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        self.embeddings = embeddings  # the endpoint has an embedding model: hybrid search
        self.core, self.index_client, self.prefix = core, index_client, prefix
        self.blocks = tuple(blocks)
        self.shared_blocks = dict(shared_blocks or {})  # label -> scope shared with other agents

    def scopes(self) -> dict[str, str]:
        """Where each block lives: persona with the agent, the others with the user, shared ones as set."""
        scopes = {b.label: f"user:{self.user_id}" for b in self.blocks}
        scopes["persona"] = f"agent:{self.name}"
        return {**scopes, **self.shared_blocks}

    def tools(self) -> MemoryTools:
        archival = SearchIndex(self.index_client, f"archival:{self.user_id}", prefix=self.prefix)
        recall = SearchIndex(self.index_client, f"recall:{self.user_id}:{self.chat_id}", prefix=self.prefix)
        return MemoryTools(
            self.core, self.scopes(), archival, recall, embed=self.llm.embed if self.embeddings else None
        )

    async def core_blocks(self) -> list[Block]:
        scopes = self.scopes()
        by_scope: dict[str, list[Block]] = {}
        for block in self.blocks:
            by_scope.setdefault(scopes[block.label], []).append(block)
        found: list[Block] = []
        for scope, defaults in by_scope.items():
            found += [b for b in await self.core.ensure(scope, defaults) if scopes.get(b.label) == scope]
        for label, scope in self.shared_blocks.items():
            found += [b for b in await self.core.list(scope) if b.label == label and b not in found]
        return found

    async def refine_memory(self) -> str | None:
        """As the Assistant does, and also: index turns recall memory has not seen (written in brain mode or
        by another process), and summarize before the prompt would overflow the window."""
        memory = await self._memory()
        await self.sync_recall()
        head = self.tokenizer.count(render_blocks(await self.core_blocks())) + 600  # + system prompt, tools
        if memory.window_tokens + head + self.memory_settings.reply_tokens > self.context_window:
            keep = int(self.context_window * self.memory_settings.keep_recent_share)
            try:
                await memory.summarize(
                    self.memory_llm, self.memory_settings.summary_max_words, keep_recent=keep
                )
            except LLMError as exc:  # fit_prompt still keeps the prompt inside the window
                _log.warning("summarizing before overflow failed: %s", exc)
        return await super().refine_memory()

    async def take_back(self, n: int) -> list[Message]:
        """As the Assistant does; the turns also leave recall memory."""
        taken = await super().take_back(n)
        recall = self.tools().recall
        for message in taken:
            await recall.delete(message.id)
        return taken

    async def sync_recall(self, tools: MemoryTools | None = None) -> int:
        """Index the stored turns recall memory has not seen yet (with vectors when embeddings are on):
        turns of this process, of other processes, or written before the tiered mode. Returns how many."""
        tools = tools or self.tools()
        memory = await self._memory()
        marker = await tools.recall.get_source("turns") or {"upto": 0}
        upto, added = int(marker["upto"]), 0
        while upto < memory.turn_count:
            turns = await memory.read_history(upto + 1, 500)
            if not turns:
                break
            docs = [recall_doc(t.message) for t in turns if not t.hidden]
            vectors = await tools.embed([d.text for d in docs]) if tools.embed is not None and docs else None
            added += await tools.recall.add_many(docs, vectors)
            upto = turns[-1].seq
            await tools.recall.set_source("turns", {"upto": upto})
        return added

    async def act_stream(self) -> AsyncIterator[str]:
        memory, text = await self._memory(), self._text
        if text is None:
            raise LLMError("nothing to answer: call talk() and think() first")
        tools = self.tools()
        window, settings = self.context_window, self.memory_settings
        try:
            base = render_talk(
                persona=self.persona,
                text=text,
                tokenizer=self.tokenizer,
                history_budget=int(window * settings.prompt_history_share),
                knowledge=memory.get_knowledge(),
                summary=memory.historical_summary,
                history=memory.history,
            )
            system = base[0].model_copy(update={"content": f"{base[0].content}\n{MEMGPT_INSTRUCTIONS}"})
            head = [system, ChatMessage(role="system", content=render_blocks(await self.core_blocks()))]
            head += [m for m in base[1:] if m.role == "system"]
            messages = head + [m for m in base[1:] if m.role != "system"]
            specs = tools.specs + self.skills.specs
            reply: str | None = None
            for step in range(settings.max_tool_steps + 1):
                if step:  # memory edits show up in the next step's core memory message
                    messages[1] = ChatMessage(role="system", content=render_blocks(await self.core_blocks()))
                prompt = fit_prompt(
                    messages, window, self.tokenizer, head=len(head), reserve=settings.reply_tokens
                )
                note = pressure_note(prompt_tokens(prompt, self.tokenizer), window, settings.pressure_share)
                if note is not None:
                    prompt = fit_prompt(
                        [*prompt[: len(head)], note, *prompt[len(head) :]],
                        window,
                        self.tokenizer,
                        head=len(head) + 1,
                        reserve=settings.reply_tokens,
                    )
                last = step == settings.max_tool_steps
                completion = await self.llm.complete(prompt, tools=() if last else specs)
                if not completion.tool_calls:
                    reply = reply or (completion.content or "").strip() or None
                    break
                messages.append(completion.as_message())
                heartbeat = False
                for call in completion.tool_calls:
                    if tools.handles(call.name):
                        outcome = await tools.invoke(call)
                        heartbeat |= outcome.heartbeat
                        reply = outcome.message or reply
                        result = outcome.result
                    else:
                        result, heartbeat = await self.skills.invoke(call), True
                    messages.append(ChatMessage(role="tool", tool_call_id=call.id, content=result))
                if not heartbeat:
                    break
            if reply is None:
                raise LLMError(f"{self.llm.model}: the turn ended without a message to the user")
            yield reply
            user_turn = Message(content=text, sent_from="user")
            answer = Message(content=reply, sent_from=self.name, cause_by="TalkAction")
            memory.add_talk(user_turn)
            memory.add_answer(answer)
            await memory.dumps()
            await self.sync_recall(tools)
        except BaseException:
            memory.restore_last_talk()
            raise
        finally:
            self._text = None


def make_assistant(settings: Settings, client: RedisClient, **options: Any) -> Assistant:
    """The assistant `settings.memory.mode` asks for (`options`: llm, store, persona, ...)."""
    common: dict[str, Any] = {
        "memory_settings": settings.memory,
        "context_window": settings.llm.context_window,
        **options,
    }
    if settings.memory.mode != "tiered":
        return Assistant(**common)
    prefix = settings.redis.key_prefix
    return TieredAssistant(
        core=CoreMemory(client, prefix=prefix),
        index_client=client,
        prefix=prefix,
        embeddings=settings.llm.embedding_model is not None,
        **common,
    )
