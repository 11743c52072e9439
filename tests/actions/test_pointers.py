"""`points_back`, the lexical gate before refine_memory's LLM call: what points back, and what only looks as
if it did. Its rates on the dev conversations are `benchmarks/followups.py`'s."""

from __future__ import annotations

import pytest

from actions.pointers import points_back


@pytest.mark.parametrize(
    "text",
    [
        "How do I get there?",
        "Is it cold over there in May?",
        "Hello, is the museum open there on Sundays?",
        "Hi there! Can you book a hotel there for me next week, near the station?",
        "What about Bergen?",
        "帮我在那里订酒店",
    ],
)
def test_what_points_back(text: str) -> None:
    assert points_back(text)


@pytest.mark.parametrize(
    "text",
    [
        "hello there, I am planning a trip to Oslo",
        "Hi there! Any tips for a first week in Bergen?",
        "Hey there",
        "Howdy there, I will read up on the Norwegian fjords tonight",
        "I cleaned the flat this morning, it took forever",
        "水的沸点是多少度？",
    ],
)
def test_what_does_not(text: str) -> None:
    assert not points_back(text)


def test_chinese_is_segmented_only_when_a_demonstrative_is_in_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Segmenting (jieba, pure Python) cost a Chinese turn more than the rest of its memory work; a text
    holding none of the demonstratives cannot have one among its words."""
    from actions import pointers
    from brain.search import segmenter

    segmented: list[str] = []
    words = segmenter.words

    def counted(text: str) -> list[str]:
        segmented.append(text)
        return words(text)

    monkeypatch.setattr(segmenter, "words", counted)
    assert not pointers.points_back("我们明天早上坐火车去杭州，然后在西湖边的餐厅吃午饭，很好吃")
    assert segmented == []
    assert pointers.points_back("我们明天早上坐火车去杭州，然后在西湖边的餐厅吃午饭，那里很贵")
    assert segmented == ["我们明天早上坐火车去杭州，然后在西湖边的餐厅吃午饭，那里很贵"]
