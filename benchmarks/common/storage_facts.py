"""Facts stored as the fact worker stores them (`actions.remember` → `actions.reconcile`): each fact with its
search entry and its audit event in one write (`FactMemory.add`, actor "fact-extractor", reason "new fact"),
provenance the ids of every turn of its 20-turn extraction batch, then the batch's facts recorded
(`set_batch_facts`) and the chat's progress (`set_progress`). For `benchmarks/storage.py`."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from brain.memory.facts import Fact, FactMemory, fact_hash

__all__ = ["fact_texts", "store_facts"]

_EN = {
    "rel": ["sister", "brother", "cousin", "colleague", "neighbour", "friend", "aunt", "uncle"],
    "name": ["Anna", "Ben", "Chloe", "Dev", "Emil", "Fatima", "Goran", "Hana", "Ivo", "Jun", "Kai", "Lea"],
    "city": ["Oslo", "Bergen", "Lisbon", "Kyoto", "Denver", "Quito", "Porto", "Turin", "Cork", "Perth"],
    "job": ["nurse", "teacher", "pilot", "chef", "welder", "lawyer", "baker", "architect", "translator"],
    "place": ["bakery", "clinic", "school", "law firm", "shipyard", "bookshop", "hotel", "museum"],
}
_ZH = {
    "rel": ["姐姐", "哥哥", "表妹", "同事", "邻居", "朋友", "阿姨", "叔叔"],
    "name": ["小林", "阿杰", "晓雯", "大伟", "思琪", "浩然", "佳怡", "子轩", "雨桐", "俊杰", "梦瑶", "志强"],
    "city": ["成都", "西安", "厦门", "杭州", "青岛", "昆明", "大连", "苏州", "长沙", "南京"],
    "job": ["护士", "老师", "飞行员", "厨师", "律师", "面包师", "建筑师", "翻译"],
    "place": ["面包店", "诊所", "学校", "律师事务所", "书店", "酒店", "博物馆", "设计院"],
}
_TEMPLATES = {
    "en": "The user's {rel} {name} moved to {city} in {year} and works as a {job} at a {place} there, "
    "visiting the user most summers with the kids.",
    "zh": "用户的{rel}{name}在{year}年搬到了{city}，现在在那里的一家{place}当{job}，"
    "每年夏天都带着孩子来看用户。",
}


def fact_texts(language: str, n: int, seed: int = 30) -> list[tuple[str, str, str]]:
    """`n` distinct (text, key, value) facts of about 130 UTF-8 bytes. Deterministic."""
    pack = _EN if language == "en" else _ZH
    rng, seen = random.Random(f"facts-{language}-{seed}"), set()
    out: list[tuple[str, str, str]] = []
    while len(out) < n:
        values = {k: rng.choice(v) for k, v in pack.items()} | {"year": str(rng.randint(1990, 2024))}
        text = _TEMPLATES[language].format(**values)
        if text not in seen:
            seen.add(text)
            key = f"user.{values['rel']}.{values['name']}.city"
            out.append((text, key, values["city"]))
    return out


async def store_facts(
    facts: FactMemory, user_id: str, language: str, n: int, *, per_batch: int = 2, batch_turns: int = 20
) -> None:
    """`n` facts for `user_id`, `per_batch` from each extraction batch of `batch_turns` turns."""
    rng = random.Random(f"turn-ids-{language}")
    start = datetime(2025, 1, 6, 8, 0, tzinfo=UTC)
    texts = fact_texts(language, n)
    for b, first in enumerate(range(0, n, per_batch)):
        source = tuple(f"{rng.getrandbits(128):032x}" for _ in range(batch_turns))
        when = (start + timedelta(hours=b)).timestamp()
        ids = []
        for text, key, value in texts[first : first + per_batch]:
            fact = Fact(
                text=text, category="relationships", key=key, value=value, valid_at=when, source_turns=source
            )
            stored, _ = await facts.add(user_id, fact, actor="fact-extractor", reason="new fact")
            ids.append(stored.id)
        await facts.set_batch_facts(user_id, fact_hash("\n".join(source)), ids)
        await facts.set_progress(user_id, "chat", (b + 1) * batch_turns)
