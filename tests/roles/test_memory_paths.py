"""The memory tool's paths and text edits (pure)."""

from __future__ import annotations

import pytest

from brain.errors import InputError
from roles.memory_edits import insert_at, listing, numbered, replace_once
from roles.memory_paths import MAX_DEPTH, MemoryPath, parse_path


def test_the_root_the_blocks_a_block_and_files() -> None:
    assert parse_path("/memories") == MemoryPath(kind="root")
    assert parse_path("/memories/") == MemoryPath(kind="root")
    assert parse_path("/memories/blocks") == MemoryPath(kind="blocks", parts=("blocks",))
    block = parse_path("/memories/blocks/human")
    assert block.kind == "block" and block.label == "human" and block.text == "/memories/blocks/human"
    note = parse_path("/memories/旅行/护照 在哪.md")
    assert note == MemoryPath(kind="file", parts=("旅行", "护照 在哪.md"))
    assert note.text == "/memories/旅行/护照 在哪.md"
    assert parse_path("/memories/notes/").text == "/memories/notes"
    assert parse_path("/memories/blocksmith").kind == "file"


@pytest.mark.parametrize(
    ("raw", "complaint"),
    [
        ("/memories/../etc/passwd", "'..'"),
        ("/memories/a/./b", "'.'"),
        ("/memories//a", "empty"),
        ("/memories/a//", "empty"),
        ("/etc/passwd", "under it"),
        ("/memoriesX/a", "under it"),
        ("memories/a", "under it"),
        ("/", "under it"),
        ("", "under it"),
        ("/memories/a\\..\\b", "backslash"),
        ("/memories/a\x00b", "control"),
        ("/memories/a\nb", "control"),
        ("/memories/a\tb", "control"),
        ("/memories/evil\u202etxt.md", "bidirectional"),  # right-to-left override
        ("/memories/zero\u200bwidth", "invisible"),
        ("/memories/bom\ufeff", "invisible"),
        ("/memories/private\ue000", "private-use"),
        ("/memories/unassigned\U000e0fff", "unassigned"),
        ("/memories/line\u2028sep", "control"),
        ("/memories/nbsp\u00a0x", "whitespace"),
        ("/memories/cafe\u0301", "NFC"),  # e + combining acute: café not in NFC
        ("/memories/ a", "space"),
        ("/memories/a /b", "space"),
        ("/memories/" + "x" * 129, "128"),
        ("/memories/" + "/".join("d" * (MAX_DEPTH + 1)), f"{MAX_DEPTH} levels"),
        ("/memories/" + "x" * 600, "512"),
        ("/memories/blocks/human/notes", "only core memory blocks"),
        ("/memories/blocks/hu man", "only core memory blocks"),
    ],
)
def test_a_hostile_or_malformed_path_is_refused_without_echoing_it(raw: str, complaint: str) -> None:
    with pytest.raises(InputError) as refused:
        parse_path(raw)
    message = str(refused.value)
    assert complaint in message
    assert message.startswith("path")
    if len(raw) > 12:
        assert raw not in message


def test_a_path_that_is_not_text_is_refused_naming_the_argument() -> None:
    with pytest.raises(InputError, match=r"^new_path must be a string$"):
        parse_path(["/memories"], "new_path")


def test_contains_is_by_segments_not_by_prefix() -> None:
    notes = parse_path("/memories/notes")
    assert notes.contains(parse_path("/memories/notes/a.md"))
    assert notes.contains(notes)
    assert not notes.contains(parse_path("/memories/notes2/a.md"))
    assert not notes.contains(parse_path("/memories"))


def test_numbered_shows_line_numbers_and_ranges() -> None:
    text = "alpha\nbeta\ngamma"
    assert numbered(text) == "     1\talpha\n     2\tbeta\n     3\tgamma"
    assert numbered(text, [2, 3]) == "     2\tbeta\n     3\tgamma"
    assert numbered(text, [2, -1]) == "     2\tbeta\n     3\tgamma"
    assert numbered("") == ""
    for bad in ([0, 2], [3, 2], [1, 4], [1]):
        with pytest.raises(InputError, match="view_range"):
            numbered(text, bad)


def test_replace_once_needs_exactly_one_occurrence() -> None:
    replaced = replace_once("I live in Lisbon.\nI like tea.", "Lisbon", "Porto")
    assert replaced == "I live in Porto.\nI like tea."
    assert replace_once("a-b", "-b", "") == "a"
    with pytest.raises(InputError, match="does not occur verbatim") as missing:
        replace_once("I like tea", "zqsecret", "x")
    assert "zqsecret" not in str(missing.value)
    with pytest.raises(InputError, match=r"occurs 3 times \(lines 1, 3\)"):
        replace_once("tea tea\nmilk\ntea", "tea", "coffee")
    with pytest.raises(InputError, match="must not be empty"):
        replace_once("tea", "", "x")


def test_insert_at_puts_lines_after_the_given_line() -> None:
    assert insert_at("a\nb", 0, "top") == "top\na\nb"
    assert insert_at("a\nb", 1, "mid\nmid2") == "a\nmid\nmid2\nb"
    assert insert_at("a\nb", 2, "end") == "a\nb\nend"
    assert insert_at("", 0, "first") == "first"
    with pytest.raises(InputError, match="from 0 to 2"):
        insert_at("a\nb", 3, "x")


def test_listing_sorts_by_path() -> None:
    shown = listing("/memories", [("/memories/b.md", "3 bytes"), ("/memories/a.md", "1 bytes")])
    assert shown.splitlines() == [
        "The memory files and blocks under /memories:",
        "1 bytes\t/memories/a.md",
        "3 bytes\t/memories/b.md",
    ]
    assert listing("/memories/x", []).endswith("(empty)")
