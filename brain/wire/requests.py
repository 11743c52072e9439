"""The HTTP API's request bodies and what they allow. Unknown fields are refused (a request cannot name a
tenant: the tenant comes from its API key)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

__all__ = [
    "ID_PATTERN",
    "MAX_PASSAGE_BYTES",
    "MAX_QUERY_BYTES",
    "MAX_TAGS",
    "TAG_PATTERN",
    "AddRequest",
    "BlockEdit",
    "ChatRequest",
    "NewMessage",
    "PassageRequest",
    "Tag",
]

_STRICT = ConfigDict(frozen=True, extra="forbid")

ID_PATTERN = r"^[^\x00-\x1f/]{1,256}$"
"""What a request schema declares of an id (`brain.keys.check_id` checks the rest: every id made is
reachable)."""
MAX_PASSAGE_BYTES = 8_000
"""The most a passage stored through the service holds (UTF-8 bytes): longer text, split first (`brain
memory load`, or a chat message with `oversize: "archive"`)."""
MAX_QUERY_BYTES = 4_000
MAX_TAGS = 16
TAG_PATTERN = r"^[^\s:\x00-\x1f\x7f]{1,64}$"
"""A tag as an index takes it: at most 64 characters, no space, ':' or control character (stored and
matched in lower case)."""

Tag = Annotated[str, Field(pattern=TAG_PATTERN)]


class NewMessage(BaseModel):
    """One message of a conversation given to `add`."""

    model_config = _STRICT

    role: Literal["user", "assistant"] = "user"
    content: str = Field(min_length=1)
    id: str | None = Field(
        None,
        pattern=ID_PATTERN,
        description="an idempotency key: a message added again with its id is stored once",
    )
    created_at: AwareDatetime | None = Field(
        None,
        description="when it was said (a backfill of a conversation held elsewhere): facts learned from it "
        "are true from then; now when absent",
    )


class ChatRequest(BaseModel):
    model_config = _STRICT

    chat_id: str = Field("default", pattern=ID_PATTERN)
    text: str = Field(min_length=1)
    stream: bool = True
    message_id: str | None = Field(
        None,
        pattern=ID_PATTERN,
        description="an idempotency key: a request retried with it gives the stored answer, never a 2nd turn",
    )
    oversize: Literal["refuse", "archive"] = Field(
        "refuse",
        description="a message too long for the model: refused (413), or stored in archival memory (202)",
    )


class AddRequest(BaseModel):
    model_config = _STRICT

    text: str | None = None
    messages: list[NewMessage] | None = None
    chat_id: str = Field("memories", pattern=ID_PATTERN)
    infer: bool = True


class BlockEdit(BaseModel):
    model_config = _STRICT

    value: str = Field(max_length=100_000, description="the block's whole new text (within its limit)")


class PassageRequest(BaseModel):
    model_config = _STRICT

    text: str = Field(
        min_length=1, max_length=MAX_PASSAGE_BYTES, description=f"at most {MAX_PASSAGE_BYTES} bytes"
    )
    tags: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS)
