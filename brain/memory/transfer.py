"""Export and import of one conversation as versioned JSON: round-trip exact, no secrets."""

from __future__ import annotations

import base64
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from brain.errors import ConflictError, InputError
from brain.jsontext import lone_surrogate_at
from brain.message import Message
from brain.progress import Progress, report
from brain.storage.conversation import Conversation, MemoryStore, Turn, WriteBatch

__all__ = [
    "EXPORT_FORMAT",
    "ConversationExport",
    "ExportedTurn",
    "export_conversation",
    "import_conversation",
]

EXPORT_FORMAT = "brain-assistant.conversation"
_PAGE = 1_000


class ExportedTurn(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    seq: int
    tokens: int
    hidden: bool = False
    dropped: bool = False  # retention dropped its text (the summary holds it): `message` has none
    message: Message


class ConversationExport(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    format: str = EXPORT_FORMAT
    version: int = 1
    user_id: str
    chat_id: str
    ids_base64: bool = False  # user_id/chat_id are base64 of raw bytes
    summary: str = ""
    summary_upto: int = 0
    title: str = ""
    last_talk: str | None = None
    turns: tuple[ExportedTurn, ...] = ()
    knowledge: tuple[Message, ...] = ()

    @model_validator(mode="after")
    def _valid_text(self) -> ConversationExport:
        where = lone_surrogate_at(self.model_dump(mode="python"))
        if where is not None:  # it could not be stored (Redis takes UTF-8): refused, whatever else is fine
            raise ValueError(f"{where} is not valid Unicode text (a lone surrogate)")
        return self

    def conversation(self) -> Conversation:
        if self.ids_base64:
            return Conversation(base64.b64decode(self.user_id), base64.b64decode(self.chat_id))
        return Conversation(self.user_id, self.chat_id)


async def export_conversation(
    store: MemoryStore, conv: Conversation, progress: Progress | None = None
) -> ConversationExport:
    """Everything stored for the conversation (every raw turn; hidden ones and those whose text retention
    dropped flagged), read page by page; `progress` is told the turns read."""
    state = await store.load(conv, window_turns=0, knowledge_items=0)
    task, count = f"exporting {conv.label}", state.meta.turn_count
    report(progress, task, 0, count, "turns")
    turns: list[Turn] = []
    while page := await store.read_turns(conv, len(turns) + 1, _PAGE):
        turns += page
        report(progress, task, len(turns), max(count, len(turns)), "turns")
    knowledge: list[Message] = []
    while page_k := await store.read_knowledge(conv, len(knowledge) + 1, _PAGE):
        knowledge += page_k
    binary = isinstance(conv.user_id, bytes) or isinstance(conv.chat_id, bytes)

    def text(value: str | bytes) -> str:
        raw = value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")
        return base64.b64encode(raw).decode() if binary else str(value)

    meta = state.meta
    return ConversationExport(
        user_id=text(conv.user_id),
        chat_id=text(conv.chat_id),
        ids_base64=binary,
        summary=meta.summary,
        summary_upto=meta.summary_upto,
        title=meta.title,
        last_talk=meta.last_talk,
        turns=tuple(
            ExportedTurn(seq=t.seq, tokens=t.tokens, hidden=t.hidden, dropped=t.dropped, message=t.message)
            for t in turns
        ),
        knowledge=tuple(knowledge),
    )


def parse_export(data: str | bytes) -> ConversationExport:
    """Validate an export file; `InputError` saying what is wrong."""
    try:
        export = ConversationExport.model_validate_json(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "file"
        raise InputError(f"not a brain-assistant conversation export: {where}: {err['msg']}") from None
    if export.format != EXPORT_FORMAT or export.version != 1:
        raise InputError(f"unsupported export {export.format!r} version {export.version}")
    if [t.seq for t in export.turns] != list(range(1, len(export.turns) + 1)):
        raise InputError("export turns must be numbered 1, 2, 3, ... without gaps")
    return export


async def import_conversation(
    store: MemoryStore,
    export: ConversationExport,
    into: Conversation | None = None,
    progress: Progress | None = None,
) -> Conversation:
    """Write an export into an empty conversation (its own, or `into`); `ConflictError` if it has data.
    `progress` is told the turns written."""
    conv = into or export.conversation()
    if (await store.load(conv, window_turns=0, knowledge_items=0)).exists:
        raise ConflictError(f"{conv.label} already has a conversation; delete it first")
    turns, task = export.turns, f"importing {conv.label}"
    report(progress, task, 0, len(turns), "turns")
    for start in range(0, max(len(turns), 1), _PAGE):
        page = turns[start : start + _PAGE]
        last = start + _PAGE >= len(turns)
        batch: dict[str, Any] = {"turns": tuple((t.message, t.tokens) for t in page)}
        if last:
            batch |= {
                "knowledge": export.knowledge,
                "set_last_talk": export.last_talk is not None,
                "last_talk": export.last_talk,
            }
        await store.write(conv, WriteBatch.model_validate(batch))
        if not last:
            report(progress, task, start + len(page), len(turns), "turns")
    if export.summary or export.summary_upto:
        await store.commit_summary(
            conv,
            summary=export.summary,
            upto=export.summary_upto,
            expected_upto=0,
            tokens=sum(t.tokens for t in turns[: export.summary_upto]),
        )
    hidden = [t.seq for t in turns if t.hidden]
    if hidden:
        await store.hide_turns(conv, hidden)
    dropped = max((t.seq for t in turns if t.dropped), default=0)
    if dropped:  # ConflictError when the export's summary does not reach them
        await store.drop_text(conv, dropped)
    if export.title:
        await store.set_title(conv, export.title)
    report(progress, task, len(turns), len(turns), "turns")
    return conv
