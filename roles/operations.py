"""What users do to a chat besides talking: take back, rewrite, remember, summarize, title, export and
import, forget. Each operation holds the chat's lock like a turn does, and lets the memory mode do its
part (recall indexing, block memory)."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from actions.title import make_title
from brain.errors import InputError
from brain.llm.usage import spending
from brain.memory.erasure import ErasureReport, erase_chat, erase_user
from brain.memory.steps import exchange_turns
from brain.memory.transfer import (
    ConversationExport,
    ExportedTurn,
    export_conversation,
    import_conversation,
)
from brain.message import Message, check_text, speaker
from brain.progress import Progress
from brain.search.documents import LoadResult, load_document
from brain.storage import fence
from brain.storage.conversation import Conversation
from roles.access import check_new_chat
from roles.engine import TurnEngine

__all__ = ["ChatOperations", "TakenBack", "exchange_turns"]


@dataclass(frozen=True)
class TakenBack:
    """What `take_back_exchanges` took back: how many exchanges, their stored turns (oldest first; they stay
    stored, hidden) and the unanswered question of a failed turn, if one was dropped (it was never stored
    as a turn)."""

    exchanges: int
    turns: tuple[Message, ...] = ()
    pending: str | None = None


class ChatOperations:
    """The chat operations over one turn engine (shared by every call, like the engine)."""

    def __init__(self, engine: TurnEngine) -> None:
        self.engine = engine
        self.runtime = engine.runtime
        self.memory_settings = engine.memory_settings

    async def take_back(self, user_id: str, chat_id: str, n: int = 1) -> list[Message]:
        """Take back the newest `n` turns not taken back yet, whether or not a summary covers them: out of
        the window and recall, still stored (flagged hidden). The summary is not rewritten."""
        if n < 0:
            raise InputError(f"cannot take back {n} turns")
        async with self.engine.chat_memory(user_id, chat_id) as memory:
            return await self.engine.mode.take_back(self.engine, memory, n)

    async def take_back_exchanges(self, user_id: str, chat_id: str, n: int = 1) -> TakenBack:
        """Take back the newest `n` exchanges (a question and its answers) as `take_back` does with turns, so
        that the newest turn left is an answer and `retry`/`rewrite` work on it. The unanswered question of a
        failed turn, or a stored question without an answer, counts as one exchange and goes too."""
        if n < 0:
            raise InputError(f"cannot take back {n} exchanges")
        async with self.engine.chat_memory(user_id, chat_id) as memory:
            pending, done = memory.last_talk, 0
            if pending is not None and n > 0:
                memory.set_last_talk(None)
                await memory.dumps()
                done = 1
            want = 2 * (n - done) + 2
            while True:
                turns = await memory.last_turns(want)
                count, found = exchange_turns(turns, n - done)
                if count < len(turns) or len(turns) < want:  # every exchange counted is whole
                    break
                want *= 2
            taken = await self.engine.mode.take_back(self.engine, memory, count)
            return TakenBack(exchanges=done + found, turns=tuple(taken), pending=pending if done else None)

    async def rewrite(self, user_id: str, chat_id: str, text: str) -> None:
        """Replace the last answer (the newest turn not taken back, summarized or not) with `text`; the old
        one stays stored, taken back, and the new one is the chat's newest turn."""
        text = check_text(text, self.memory_settings.max_message_bytes, "rewritten answer")
        async with self.engine.chat_memory(user_id, chat_id) as memory:
            last = await memory.last_turns(1)
            if not last or last[-1].message.role != "assistant":
                raise InputError("there is no answer to rewrite")
            await self.engine.mode.take_back(self.engine, memory, 1)
            answer = Message(content=text, sent_from=self.engine.speaker, metadata={"rewritten": True})
            memory.add_answer(answer)
            await memory.dumps()
            await self.engine.mode.written(self.engine, memory)
            await self.engine.mode.rewritten(self.engine, memory, answer)

    async def add_turns(self, user_id: str, chat_id: str, messages: Sequence[Message]) -> int:
        """Store turns said elsewhere (a transcript, a note), answering nothing: they join the chat, its
        recall memory, and the queue for fact extraction. Appends are idempotent by message id; returns how
        many turns the chat has now. Every text is checked before anything is written."""
        check_new_chat(user_id, chat_id)
        if not messages:
            raise InputError("there are no messages to add")
        for message in messages:
            check_text(message.content, self.memory_settings.max_message_bytes)
            if message.role not in {"user", "assistant"}:
                raise InputError(f"a message's role is user or assistant, not {message.role!r}")
        async with self.engine.chat_memory(user_id, chat_id) as memory:
            for message in messages:
                (memory.add_talk if message.role == "user" else memory.add_history)(message)
            await memory.dumps()
            await self.engine.mode.written(self.engine, memory)
            await self.engine.after_commit.run("queueing for facts", lambda: self.engine.queue_facts(memory))
            return memory.turn_count

    async def add_knowledge(self, user_id: str, chat_id: str, text: str) -> None:
        check_new_chat(user_id, chat_id)
        text = check_text(text, self.memory_settings.max_message_bytes, "knowledge")
        async with self.engine.chat_memory(user_id, chat_id) as memory:
            memory.add_knowledge(Message(content=text.strip(), sent_from="user"))
            await memory.dumps()

    async def archive(self, user_id: str, chat_id: str, text: str, *, named: str | None = None) -> LoadResult:
        """Store `text` in the user's archival memory (passages every chat of the user can search) instead
        of sending it: what a message too long for the model becomes when its sender asks. Its source names
        the chat (as `named`, default `chat_id`) and the text's digest (the same text again adds nothing).
        No LLM call but embeddings."""
        check_new_chat(user_id, chat_id)
        text = check_text(text, self.memory_settings.max_message_bytes)
        tiers = self.engine.tiers
        await tiers.present(user_id)
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        with fence.holding(await tiers.backend.erasure.ticket(user_id)):
            return await load_document(
                tiers.archival(user_id),
                f"message {digest} in chat {named or chat_id}",
                text,
                self.runtime.tokenizer,
                embed=tiers.embed,
            )

    async def summarize_now(self, user_id: str, chat_id: str) -> str:
        """Summarize the chat now (every unsummarized turn); the summary, "" for an empty chat."""
        async with self.engine.chat_memory(user_id, chat_id) as memory:
            with spending() as spent:
                try:
                    return await memory.summarize(
                        self.engine.summarizer, self.memory_settings.summary_max_words, keep_language=True
                    )
                finally:
                    await self.engine.record_usage(user_id, chat_id, spent)

    async def title(self, user_id: str, chat_id: str, max_words: int = 5) -> str:
        """Give the chat a title (one call on the memory model; none for an empty chat)."""
        async with self.engine.chat_memory(user_id, chat_id) as memory:
            lines = [memory.history_text, *(f"{speaker(m)}: {m.content}" for m in memory.history[-1:])]
            text = "\n".join(filter(None, lines))
            if not text.strip():
                return "New conversation"
            window = self.runtime.tokenizer.truncate(text, self.memory_settings.window_tokens)
            with spending() as spent:
                try:
                    title = await make_title(self.runtime.memory_llm, window, max_words)
                finally:
                    await self.engine.record_usage(user_id, chat_id, spent)
            await memory.set_title(title)
            return title

    async def export_chat(
        self, user_id: str, chat_id: str, *, progress: Progress | None = None
    ) -> ConversationExport:
        """Everything stored of the chat (every raw turn) as a versioned export; `progress` is told the
        turns read."""
        async with self.engine.lock(user_id, chat_id):
            await self.engine.present(user_id)
            return await export_conversation(self.runtime.store, Conversation(user_id, chat_id), progress)

    async def import_chat(
        self, user_id: str, chat_id: str, export: ConversationExport, *, progress: Progress | None = None
    ) -> None:
        """Load an export into this empty chat (`ConflictError` when it has data); `progress` is told the
        turns written, then (tiered) the turns indexed for recall. Its turns are queued for fact memory:
        facts are learned from them as if lived, valid from each turn's own time."""
        check_new_chat(user_id, chat_id)
        async with self.engine.chat_memory(user_id, chat_id):
            await import_conversation(self.runtime.store, export, Conversation(user_id, chat_id), progress)
            memory = await self.engine.load_memory(user_id, chat_id)
            await self.engine.mode.written(self.engine, memory, progress)
            await self.engine.queue_facts(memory)

    async def backfill(
        self, user_id: str, chat_id: str, messages: Sequence[Message], *, progress: Progress | None = None
    ) -> None:
        """Load a conversation that happened elsewhere into this empty chat, each message keeping its
        `created_at`, oldest first (`InputError` otherwise); then as `import_chat`: its facts and their
        validity intervals are the ones living through it would have given."""
        if any(b.created_at < a.created_at for a, b in itertools.pairwise(messages)):
            raise InputError("backfill messages must be in time order, oldest first")
        count = self.runtime.tokenizer.count
        turns = tuple(
            ExportedTurn(seq=i, tokens=count(m.content), message=m) for i, m in enumerate(messages, 1)
        )
        export = ConversationExport(user_id=user_id, chat_id=chat_id, turns=turns)
        await self.import_chat(user_id, chat_id, export, progress=progress)

    async def forget(self, user_id: str, chat_id: str) -> ErasureReport:
        """Erase the chat in every tier: turns, summary, knowledge, title, recall postings and vectors. It
        does not wait for a call on the chat to end: what that call writes afterwards is dropped."""
        conv = Conversation(user_id, chat_id)
        return await erase_chat(self.runtime.store, self.runtime.tiers, conv)

    async def forget_user(self, user_id: str) -> ErasureReport:
        """Erase everything of `user_id`: every chat, archival memory, the user's core blocks; `remaining`
        lists any key of the user a final scan still found."""
        self.engine.prompt_facts.cache.forget(user_id)
        return await erase_user(self.runtime.store, self.runtime.tiers, user_id)
