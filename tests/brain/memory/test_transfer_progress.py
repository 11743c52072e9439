"""Importing and exporting a long chat tells its progress page by page, with the right counts, on every
store."""

from __future__ import annotations

from brain.memory.transfer import ConversationExport, ExportedTurn, export_conversation, import_conversation
from brain.message import Message
from brain.progress import ProgressEvent
from brain.storage.conversation import Conversation, MemoryStore

TURNS = 2_345  # three pages of 1,000


def long_export() -> ConversationExport:
    turns = tuple(
        ExportedTurn(seq=i, tokens=3, message=Message(id=f"m{i}", content=f"turn {i}"))
        for i in range(1, TURNS + 1)
    )
    return ConversationExport(user_id="ann", chat_id="long", turns=turns, title="Long", summary_upto=0)


async def test_import_and_export_tell_the_turns_page_by_page(store: MemoryStore) -> None:
    into = Conversation("bob", "copy")
    seen: list[ProgressEvent] = []
    await import_conversation(store, long_export(), into, progress=seen.append)
    assert [(e.done, e.total, e.unit) for e in seen] == [
        (0, TURNS, "turns"),
        (1_000, TURNS, "turns"),
        (2_000, TURNS, "turns"),
        (TURNS, TURNS, "turns"),
    ]
    assert {e.task for e in seen} == {f"importing {into.label}"} and seen[-1].finished
    assert (await store.load(into, window_turns=0, knowledge_items=0)).meta.turn_count == TURNS
    seen.clear()
    export = await export_conversation(store, into, progress=seen.append)
    assert len(export.turns) == TURNS
    assert [e.done for e in seen] == [0, 1_000, 2_000, TURNS] and {e.total for e in seen} == {TURNS}
    assert seen[0].task == f"exporting {into.label}"


async def test_an_empty_chat_tells_nothing(store: MemoryStore) -> None:
    seen: list[ProgressEvent] = []
    empty = await export_conversation(store, Conversation("ann", "none"), progress=seen.append)
    await import_conversation(store, empty, Conversation("ann", "again"), progress=seen.append)
    assert seen == []
