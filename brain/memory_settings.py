"""Memory policy settings (`memory:` in the configuration): facts, graph, blocks, retention and the rest of
`MemorySettings`. Part of `brain.settings`, which exports them; frozen, read at the edge only."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["BlockSettings", "FactSettings", "GraphSettings", "MemorySettings", "RetentionSettings"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class FactSettings(BaseModel):
    """Fact memory: extraction off the reply path, by a worker reading a queue of new turns."""

    model_config = _FROZEN

    enabled: bool = True
    batch_turns: int = Field(20, ge=1, le=1_000)
    batch_tokens: int = Field(4_000, ge=100)
    idle_seconds: float = Field(2.0, gt=0)
    reclaim_seconds: float = Field(60.0, gt=0)
    prompt_facts: int = Field(8, ge=0, le=100)
    in_process_worker: bool = True
    concurrency: int = Field(8, ge=1, le=256)
    drain_seconds: float = Field(10.0, ge=0)
    max_attempts: int = Field(
        3,
        ge=1,
        le=100,
        description="tries of a batch whose reply is malformed before it is parked as a dead letter",
    )
    queue_max_len: int = Field(
        10_000,
        ge=1,
        description="entries the fact queue holds per deployment; beyond, each chat's turns wait coalesced "
        "(one record per chat, at most as many chats again) until room frees up, and are dropped (counted) "
        "past that",
    )
    dead_letters_max: int = Field(
        1_000, ge=1, description="dead letters kept per deployment; beyond, the oldest go (counted)"
    )
    audit_max_events: int = Field(
        10_000,
        ge=1,
        description="audit events kept per user, at least (the oldest are trimmed in whole stream nodes, of "
        "100 events by default); a change whose event was trimmed can no longer be rolled back",
    )
    candidate_depth: int = Field(
        50, ge=1, le=1_000, description="facts read from each of the lexical and vector rankings per new fact"
    )
    candidate_tokens: int = Field(
        1_500,
        ge=50,
        description="tokens of held facts a reconciliation prompt shows, shared by the new facts",
    )
    duplicate_similarity: float | None = Field(
        None,
        gt=0,
        le=1,
        description="embedding similarity at which a new fact is another wording of a held one; "
        "null: by key and value only",
    )


class GraphSettings(BaseModel):
    """Graph memory: entities and relations extracted by the fact worker (one more call per batch, a
    second only to check contradictions), used by search."""

    model_config = _FROZEN

    enabled: bool = False
    max_entities: int = Field(30, ge=1, le=500)  # per batch; more are cut (and logged)
    max_relations: int = Field(40, ge=1, le=500)
    max_checks: int = Field(20, ge=0, le=200)  # existing relations shown to the contradiction check
    seeds: int = Field(1, ge=0, le=20)  # best hits whose entities seed a graph-boosted search
    neighbours: int = Field(20, ge=0, le=500)  # relations followed from the seeds
    hub_mentions: int = Field(50, ge=1)  # an entity named by more documents boosts none of them


class BlockSettings(BaseModel):
    """Block memory (`memory.mode: blocks`), in LlamaIndex's terms: the history is a FIFO of at most
    `chat_history_token_ratio` x `token_limit` tokens; what overflows (`token_flush_size` at a time) goes to
    the blocks; history and blocks together stay within `token_limit`."""

    model_config = _FROZEN

    token_limit: int = Field(30_000, ge=256)
    chat_history_token_ratio: float = Field(0.7, gt=0, lt=1)
    token_flush_size: int | None = Field(None, ge=1, description="default: 10% of token_limit")
    insert_method: Literal["system", "user"] = "system"
    static: str = ""
    static_priority: int = Field(0, ge=0)
    facts: bool = True
    max_facts: int = Field(50, ge=1, le=1_000)
    facts_priority: int = Field(1, ge=0)
    vector: bool = True
    vector_top_k: int = Field(2, ge=1, le=50)
    vector_priority: int = Field(2, ge=0)

    @model_validator(mode="after")
    def _check_flush(self) -> BlockSettings:
        if self.token_flush_size is not None and self.token_flush_size > self.token_limit:
            raise ValueError("token_flush_size must not be larger than token_limit")
        return self

    @property
    def flush_size(self) -> int:
        return self.token_flush_size or max(int(self.token_limit * 0.1), 1)

    @property
    def history_limit(self) -> int:
        return int(self.token_limit * self.chat_history_token_ratio)


class RetentionSettings(BaseModel):
    """How long turns stay verbatim (`brain.memory.retention`). Past both limits that are set, a turn loses
    its raw text, but only once the chat's summary covers it and, with fact memory on, the fact worker has
    read it; both unset (the default): every turn is kept."""

    model_config = _FROZEN

    keep_turns: int | None = Field(None, ge=0, description="the newest N turns of a chat stay verbatim")
    keep_days: float | None = Field(None, ge=0, description="turns of the last N days stay verbatim")
    every_seconds: float = Field(3_600.0, gt=0, description="how often `brain worker` applies the policy")

    @property
    def enabled(self) -> bool:
        return self.keep_turns is not None or self.keep_days is not None


class MemorySettings(BaseModel):
    """Memory policy: durability, size limits and the summarizer's budget."""

    model_config = _FROZEN

    llm: str = Field("memory", description="name in `llms` used for memory work; falls back to `llm`")
    mode: Literal["brain", "tiered", "blocks"] = "brain"
    rewrite_followups: bool = Field(
        True,
        description="a message that may point back at the conversation (it, there, 那里, what about...) is "
        "checked and rewritten self-contained by one memory-model call (MetaGPT's is_related + rewrite); "
        "the answer sees both, memory search uses the rewrite",
    )
    pressure_share: float = Field(0.75, gt=0, le=1)
    ttl_seconds: int | None = Field(None, gt=0)
    erase_fence_seconds: int = Field(
        604_800,
        gt=0,
        description="on Redis Cluster, how long an erasure's fence stays in each namespace it erased "
        "(work that began before the erasure and is still running after this is not stopped)",
    )
    max_message_bytes: int = Field(1_048_576, gt=0)
    archive_idle_days: int | None = Field(
        None,
        gt=0,
        description="`brain worker` moves users idle this many days to the cold archive (off Redis); none: "
        "only `brain memory archive` does",
    )
    archive_dir: Path | None = Field(None, description="the cold archive's folder (default: <home>/archive)")
    archive_url: str | None = Field(
        None, description="the cold archive by URL instead (file://...; object storage needs fsspec)"
    )
    retention: RetentionSettings = RetentionSettings()
    summarize_share: float = Field(0.75, gt=0, le=1)
    keep_recent_share: float = Field(0.5, ge=0, lt=1)
    prompt_history_share: float = Field(0.4, gt=0, lt=1)
    reply_tokens: int = Field(1_024, ge=16)
    max_tool_steps: int = Field(4, ge=0, le=32)
    summary_max_words: int = Field(200, ge=20)
    window_max_turns: int = Field(40, ge=1)
    knowledge_max_items: int = Field(100, ge=0)
    window_tokens: int = Field(4_000, ge=200)
    summarize_max_calls: int = Field(20, ge=1)
    summarize_max_prompt_tokens: int = Field(40_000, ge=1_000)
    summarize_concurrency: int = Field(4, ge=1, le=64)
    facts: FactSettings = FactSettings()
    graph: GraphSettings = GraphSettings()
    blocks: BlockSettings = BlockSettings()
