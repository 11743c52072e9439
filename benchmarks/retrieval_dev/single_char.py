"""Chinese single-character probes: a question about 猫, 茶 or 鞋 and a passage that has the character only
inside a longer word (猫咪, 绿茶, 跑鞋), which is all they share. jieba cuts a passage into words, so before
analysis "3" indexed the characters of longer words, none of these passages could be found (issue 26).

Each probe's passage is planted among the others and the turns of one Chinese dev conversation (those where
a probe's character is a word of its own, true answers, left out), and counts as a hit when it is among the
first `k` results of its question. Data and scoring only: bring a search.

    hits, total = await single_char_hits(search)   # search(query) -> texts, best first; passages() indexed
    hits, total = await index_single_char_hits(redis_index(client, base))  # indexes, scores, drops
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from benchmarks.retrieval_dev.generate import generate
from brain.search.analysis import terms
from brain.search.index import IndexedDoc, SearchIndex

__all__ = ["PROBES", "Probe", "distractors", "index_single_char_hits", "passages", "single_char_hits"]

K = 5
TS = 1_656_000_000.0  # 2022-06-23: the day every passage is written on (a dated index heads it with it)


@dataclass(frozen=True)
class Probe:
    char: str
    passage: str
    query: str


PROBES = tuple(
    Probe(*p)
    for p in (
        ("猫", "我家的猫咪最近特别爱睡觉。", "谁家养猫？"),
        ("狗", "周末我们带小狗去公园玩了一下午。", "谁有狗？"),
        ("茶", "我每天下午都要泡一壶绿茶。", "她喜欢什么茶？"),
        ("鞋", "我刚买了一双新跑鞋，颜色特别亮。", "他换了什么鞋？"),
        ("鱼", "我在阳台上养了几条金鱼。", "家里有鱼吗？"),
        ("花", "妈妈在院子里种满了玫瑰花。", "谁喜欢花？"),
        ("车", "我每天骑自行车上班。", "谁有车？"),
        ("药", "医生给我开了一些感冒药。", "他吃了什么药？"),
        ("酒", "昨晚我们开了一瓶红酒庆祝。", "他们喝什么酒？"),
        ("雨", "下午突然下起暴雨，我全身都湿透了。", "哪天有雨？"),
        ("山", "我们上个月去爬了黄山。", "他们去过哪座山？"),
        ("海", "今年夏天我们去海边度假了。", "谁去过海？"),
        ("马", "我女儿最近迷上了骑马。", "谁喜欢马？"),
        ("鸟", "阳台上的小鸟每天早上都来吃米。", "有人提到鸟吗？"),
        ("牛", "我中午吃了一碗牛肉面。", "谁提过牛？"),
        ("琴", "我小时候学过钢琴。", "谁会弹琴？"),
        ("球", "我们每周三晚上一起踢足球。", "谁打球？"),
        ("糖", "医生说我血糖有点高。", "谁要少吃糖？"),
        ("蛋", "早餐我煎了两个鸡蛋。", "冰箱里还有蛋吗？"),
        ("雪", "上周末我们去滑雪了。", "谁喜欢雪？"),
        ("房", "我们终于买了自己的房子。", "谁有房？"),
        ("书", "我周末都泡在图书馆里。", "谁爱看书？"),
        ("米", "晚饭我煮了玉米。", "谁吃米？"),
        ("桥", "我们沿着大桥走到了对岸。", "那座桥叫什么？"),
    )
)
"""Each probe's question shares no word with its passage (as analysis "2", words only, cuts them): only
its character, inside a longer word of the passage. Most questions have it as a word of its own (谁有狗);
some, as jieba cuts them, inside a word too (养猫, 看书)."""


@functools.cache
def distractors() -> tuple[str, ...]:
    """The turns of the first Chinese dev conversation, but those where a probe's character is a word of its
    own ("邻居家的猫昨晚一直叫": an answer to 猫 as good as the planted one)."""
    chars = {p.char for p in PROBES}
    turns = generate("zh", conversations=1)[0].turns
    return tuple(t.text for t in turns if not chars & set(terms(t.text, chars=False)))


def passages() -> list[str]:
    """What to index before `single_char_hits`: the probes' passages, then the distractors."""
    return [p.passage for p in PROBES] + list(distractors())


async def single_char_hits(
    search: Callable[[str], Awaitable[Sequence[str]]], *, k: int = K
) -> tuple[int, int]:
    """How many probes find their passage, and how many there are: `search(query)` returns the texts of its
    hits, best first, over an index of `passages()` (a hit's text may hold more than the passage, e.g. a
    day before it); a probe is a hit when its passage is in one of the first `k`."""
    hits = 0
    for probe in PROBES:
        found = await search(probe.query)
        hits += any(probe.passage in text for text in found[:k])
    return hits, len(PROBES)


async def index_single_char_hits(index: SearchIndex, *, k: int = K) -> tuple[int, int]:
    """`single_char_hits` lexically on `index`, which must be empty: indexes `passages()` into it, scores,
    and drops it."""
    if await index.count():
        raise ValueError(f"{index.base} is not empty")
    docs = [IndexedDoc(id=f"p{i}", text=text, ts=TS) for i, text in enumerate(passages())]
    try:
        await index.add_many(docs)

        async def search(query: str) -> list[str]:
            hits, _ = await index.search(query, limit=k)
            return [index.indexed_text(h.doc) for h in hits]

        return await single_char_hits(search, k=k)
    finally:
        await index.drop()
