"""A conversation's recall memory as its search index stores it: each turn is a document whose text stays
in the conversation. The index keeps a reference (the id and the turn's seq) and reads the document back
from the turns when a search returns it, so a turn's text is stored once."""

from __future__ import annotations

from collections.abc import Sequence

from brain.message import Message, speaker
from brain.storage.conversation import Conversation, ConversationStore
from brain.storage.index import IndexedDoc

__all__ = ["TurnTexts", "recall_doc"]

_TURN = "turn"


def recall_doc(message: Message, seq: int | None = None) -> IndexedDoc:
    """A turn as recall memory indexes it (an index of `turns`, `brain.search.storage.DocumentIndex`: its
    text "speaker: content", its role its first tag); with its `seq`, stored as a reference to the turn.
    Pure."""
    return IndexedDoc(
        id=message.id,
        text=f"{speaker(message)}: {message.content}",
        ts=message.created_at.timestamp(),
        tags=(message.role,),
        metadata={_TURN: seq} if seq is not None else {},
    )


def _seq(doc: IndexedDoc) -> int | None:
    seq = doc.metadata.get(_TURN)
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None


class TurnTexts:
    """A `TextSource` (`brain.search.storage`): the texts of one conversation's recall documents are its
    turns'. A document whose turn is gone, or now holds another message, is not found."""

    def __init__(self, store: ConversationStore, conv: Conversation) -> None:
        self.store, self.conv = store, conv

    def reference(self, doc: IndexedDoc) -> IndexedDoc:
        seq = _seq(doc)
        return doc if seq is None else IndexedDoc(id=doc.id, text="", ts=0.0, metadata={_TURN: seq})

    async def documents(self, stored: Sequence[IndexedDoc]) -> list[IndexedDoc | None]:
        wanted = [seq for d in stored if not d.text and (seq := _seq(d)) is not None]
        turns = {t.seq: t.message for t in await self.store.turns_at(self.conv, wanted)} if wanted else {}
        out: list[IndexedDoc | None] = []
        for doc in stored:
            seq = _seq(doc)
            if doc.text or seq is None:
                out.append(doc)
                continue
            message = turns.get(seq)
            if message is None or message.id != doc.id:
                out.append(None)
            else:
                out.append(recall_doc(message, seq))
        return out
