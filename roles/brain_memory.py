"""`BrainMemory` with MetaGPT's call forms beside ours: used standalone with Redis keys, and with `llm=` for
its LLM work (summarize, get_title, is_related, rewrite).

`BrainMemory()` needs no store: `await memory.dumps(redis_key=...)` and `await BrainMemory.loads(
redis_key=...)` use the store of `Context.default()` (the configured Redis, or the embedded Valkey). A key
made by `to_redis_key(prefix, user_id, chat_id)` names that user's chat; any other key names a chat of the
memory's own user (`default` unless set). MetaGPT's defects stay fixed: nothing expires unless
`memory.ttl_seconds` says so (no silent 30-minute TTL), turns are appended, never the whole blob rewritten,
and a failed read is an error, never an empty memory.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, PrivateAttr

from actions.relate import context_of
from actions.relate import is_related as related
from actions.relate import rewrite as rewrite_text
from actions.summarizer import Summarizer
from actions.title import make_title
from brain.errors import InputError
from brain.keys import conversation_ids, conversation_keys
from brain.llm.protocol import LLM
from brain.llm.tokens import Tokenizer
from brain.memory import brain_memory as base
from brain.settings import MemorySettings
from brain.storage.conversation import MemoryStore
from roles.context import Context

__all__ = ["BrainMemory", "conversation_of"]


def conversation_of(redis_key: str, prefix: str, user_id: str | bytes) -> tuple[str | bytes, str | bytes]:
    """The (user, chat) a MetaGPT-style key names: one made by `to_redis_key` under `prefix` gives its own
    ids; any other key is a chat of `user_id`. Pure."""
    return conversation_ids(redis_key, prefix) or (user_id, redis_key)


class BrainMemory(base.BrainMemory):
    """One conversation's memory (see `brain.memory.BrainMemory`), with MetaGPT's call forms too. Unknown
    fields (MetaGPT's `llm`, `config`) are an error, not silently dropped: LLMs are passed per call."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    _summary_to_write: str = PrivateAttr("")

    @classmethod
    async def loads(
        cls,
        store: MemoryStore | None = None,
        user_id: str | bytes | None = None,
        chat_id: str | bytes | None = None,
        *,
        redis_key: str | None = None,
        context: Context | None = None,
        settings: MemorySettings | None = None,
        tokenizer: Tokenizer | None = None,
        pending: str | None = None,
        refuse_archived: bool = False,
    ) -> BrainMemory:
        """Ours: `loads(store, user_id, chat_id)`. MetaGPT's: `loads(redis_key=...)` from the context's
        store (an empty key gives an empty, unbound memory, as MetaGPT's does)."""
        if store is None:
            if redis_key is None:
                raise InputError("loads needs a store, user_id and chat_id, or redis_key=...")
            if not redis_key:
                return cls()
            runtime = await (context or Context.default()).runtime()
            store, settings = runtime.store, settings or runtime.settings.memory
            tokenizer, prefix = tokenizer or runtime.tokenizer, runtime.settings.redis.key_prefix
            user_id, chat_id = conversation_of(redis_key, prefix, user_id or "default")
        elif user_id is None or chat_id is None or redis_key is not None:
            raise InputError("loads(store, user_id, chat_id), or loads(redis_key=...), not both")
        loaded = await super().loads(
            store,
            user_id,
            chat_id,
            settings=settings,
            tokenizer=tokenizer,
            pending=pending,
            refuse_archived=refuse_archived,
        )
        assert isinstance(loaded, cls)
        return loaded

    async def dumps(
        self,
        redis_key: str | None = None,
        timeout_sec: int | None = None,
        *,
        context: Context | None = None,
        queue_facts: bool = False,
    ) -> bool:
        """Ours: `dumps()` on a loaded memory. MetaGPT's: `dumps(redis_key=...)` writes this memory to the
        chat the key names (binding a standalone memory to it: its turns, knowledge, summary and pending
        text are written, each once). `timeout_sec` must be None or the configured `memory.ttl_seconds`:
        chats expire only as configured. `queue_facts` as ours."""
        if redis_key is not None:
            await self._to_key(redis_key, timeout_sec, context)
        written = await super().dumps(queue_facts=queue_facts)
        if self._summary_to_write:
            await self._commit_summary(self._summary_to_write, self.summary_upto, 0)
            self._summary_to_write = ""
        return written

    async def _to_key(self, redis_key: str, timeout_sec: int | None, context: Context | None) -> None:
        """Check `dumps(redis_key=...)`'s arguments; attach a standalone memory to the chat the key names."""
        runtime = await (context or Context.default()).runtime()
        ttl = runtime.settings.memory.ttl_seconds
        if timeout_sec is not None and timeout_sec != ttl:
            raise InputError(
                f"dumps(timeout_sec={timeout_sec}): chats expire as memory.ttl_seconds says ({ttl}); "
                "set it (BRAIN_MEMORY_TTL_SECONDS) instead"
            )
        prefix = runtime.settings.redis.key_prefix
        user, chat = conversation_of(redis_key, prefix, self.user_id)
        if self._state.store is None:
            self.user_id, self.chat_id = user, chat
            self.attach(runtime.store, runtime.settings.memory, runtime.tokenizer)
        elif conversation_keys(prefix, user, chat) != conversation_keys(prefix, self.user_id, self.chat_id):
            raise InputError(
                f"this memory is {self.user_id!r}/{self.chat_id!r}'s; {redis_key!r} names another chat "
                "(copy a chat with export and import)"
            )

    def attach(self, store: MemoryStore, settings: MemorySettings, tokenizer: Tokenizer | None) -> None:
        """Bind a standalone memory (built, or loaded from JSON) to `store`: its turns, knowledge and
        summary become pending, written by the next `dumps()` (each turn once: appends are idempotent)."""
        self._bind(store, settings, tokenizer)
        turns, knowledge = list(self.history), list(self.knowledge)
        self.history, self.knowledge = [], []
        for message in turns:
            self.add_history(message)
        for message in knowledge:
            self.add_knowledge(message)
        if self.historical_summary and not self.summary_upto:  # its turns are not in any store
            self._summary_to_write = self.historical_summary
        self.is_dirty = True

    @staticmethod
    def to_int(v: Any, default: int) -> int:
        """`int(v)`, or `default` when `v` is not an integer."""
        try:
            return int(v)
        except (TypeError, ValueError):
            return default

    async def summarize(
        self,
        llm: Any = None,
        max_words: int = 200,
        keep_language: bool = False,
        limit: int = -1,
        keep_recent: Any = 0,
    ) -> str:
        """MetaGPT's `summarize(llm=..., max_words=..., keep_language=..., limit=...)`, where `llm` is any of
        our LLM clients; a summarizer (as the engine passes) works too. See `brain`'s `summarize`."""
        summarizer = llm
        if _is_llm(llm):
            summarizer = Summarizer.from_settings(llm, self.tokenizer, self._state.settings)
        if summarizer is None:
            raise InputError("summarize needs llm=... (or a summarizer)")
        return await super().summarize(summarizer, max_words, keep_language, limit, keep_recent)

    async def get_title(self, llm: LLM, max_words: int = 5) -> str:
        """A title of at most `max_words` words in the conversation's language, from the summary and
        window (one call; "New" for an empty memory). Unlike MetaGPT's, history is left as it is."""
        text = context_of(self.historical_summary, self.history, turns=len(self.history))
        if not text.strip():
            return "New"
        return await make_title(llm, text, max_words)

    @staticmethod
    async def is_related(text1: str, text2: str, llm: LLM) -> bool:
        """Whether the new text `text1` depends on `text2` (the conversation); strict TRUE/FALSE parsing, no
        call when `text1` clearly does not."""
        return await related(llm, text2, text1)

    @staticmethod
    async def rewrite(sentence: str, context: str, llm: LLM) -> str:
        """`sentence` made self-contained from `context` (the rewrite only, never doubled)."""
        return await rewrite_text(llm, sentence, context)


def _is_llm(value: Any) -> bool:
    return value is not None and callable(getattr(value, "complete", None)) and hasattr(value, "model")
