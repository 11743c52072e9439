"""`brain memory retain [--user U] [--dry-run]`: what would be and what was dropped, then nothing more."""

from __future__ import annotations

from pathlib import Path

import pytest

from brain.memory.transfer import ConversationExport, ExportedTurn
from brain.message import Message
from roles.cli.main import main


def test_retain_shows_then_drops_the_old_turns_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    turns = tuple(
        ExportedTurn(seq=i, tokens=3, message=Message(id=f"m{i}", content=f"turn {i}")) for i in range(1, 11)
    )
    export = ConversationExport(user_id="ann", chat_id="c", summary="S", summary_upto=8, turns=turns)
    file = tmp_path / "chat.json"
    file.write_text(export.model_dump_json(), encoding="utf-8")
    assert main(["memory", "import", str(file), "--user", "ann", "--chat", "c"]) == 0
    keep = ["--set", "memory.retention.keep_turns=4"]  # facts are off here: the summary is the bar
    capsys.readouterr()
    assert main(["memory", "retain", "--user", "ann"]) == 0
    assert capsys.readouterr().out.startswith("memory.retention keeps every turn")
    assert main(["memory", "retain", "--dry-run", *keep]) == 0
    dry = capsys.readouterr().out.splitlines()
    assert dry == [
        "'ann'/'c': turns 1-6 of 10 would lose their text (6 turns; summary to 8, facts to -)",
        "6 turns of 1 of 1 chats would lose their text (--dry-run: nothing changed)",
    ]
    assert main(["memory", "retain", "--user", "ann", *keep]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "6 turns of 1 of 1 chats lost their text"
    assert main(["memory", "retain", *keep]) == 0
    assert capsys.readouterr().out.splitlines() == ["0 turns of 0 of 1 chats lost their text"]
    assert main(["memory", "export", "--user", "ann", "--chat", "c"]) == 0
    again = ConversationExport.model_validate_json(capsys.readouterr().out)
    assert [t.dropped for t in again.turns] == [True] * 6 + [False] * 4
    assert [t.message.content for t in again.turns[6:]] == ["turn 7", "turn 8", "turn 9", "turn 10"]
