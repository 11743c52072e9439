"""Pure text-search logic: analysis (text to index terms), BM25 scoring, rank fusion.

Analysis, in order: NFKC and lower case; dates written as numbers ("2022-02-07", "2022/2/7", "2022年2月7日",
"2月7日", "五月") become words ("7 february 2022"), month abbreviations their month, ordinals their number, so
every way of writing a day meets every other; Han text is cut into words by jieba (search mode: words and
the shorter words inside them) and, for words of two or more characters, their characters too, so "猫"
finds "猫咪" and "茶" finds "绿茶"; kana and Hangul runs into character bigrams; Latin, Greek and Cyrillic
words lose their accents, irregular past forms become their verb (`brain.search.english`: "bought" is
"buy") and go through the Snowball (Porter 2) stemmer; stop words are dropped, Latin words by their written
form ("mostly" stays, though its stem is "most"; month names and time words are not stop words). A text
that tells a time of its own (a date, a weekday, "yesterday", "昨天", "last week": not the day heading a
dated index's document) also gets the term `DATED`, which a "when" question looks for
(`brain.search.query`). `ANALYSIS` names this analysis: an index records the one it was built with, and one
built by another is rebuilt before use (`brain.search.index`).

A query is analysed the same way, into weights (`query_weights`): 1 for words, `CHAR_WEIGHT` for the
characters of its longer Chinese words, so "绿茶" still prefers a passage with 绿茶 over one with 绿 and
茶 apart, while "狗叫" (one word to jieba) also finds "小狗在叫".
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

import Stemmer

from brain.process_caches import remember
from brain.search import segmenter
from brain.search.english import IRREGULAR
from brain.text_cache import text_cache

__all__ = [
    "ANALYSIS",
    "CHAR_WEIGHT",
    "CJK",
    "DATED",
    "HAN",
    "MONTHS",
    "STOPWORDS",
    "Fusion",
    "bm25",
    "dated",
    "fuse",
    "query_weights",
    "reciprocal_rank_fusion",
    "searchable",
    "stem",
    "term_counts",
    "terms",
]

ANALYSIS = "4"
"""The analysis version; change it whenever `terms` would give another result for some text (and keep
the old one in `brain.search.analyses`, so that an index it built can be rebuilt)."""
CHAR_WEIGHT = 0.5
"""A query's weight on the single characters of its Chinese words of two or more characters (its words
weigh 1). Measured on the Chinese dev set (`benchmarks/retrieval.py`, lexical recall@5): 0.847 at 0.5,
0.844 at 0.3, 0.825 at 1 (characters as words), 0.800 at 0 (characters found only by one-character words
of the query), 0.762 with no characters indexed (analysis "2")."""
DATED = "#dated"
"""The term of a text that tells a time of its own (no word is written with '#')."""

MONTHS = "january february march april may june july august september october november december".split()
_ABBREVIATIONS = {m[:3]: m for m in MONTHS} | {"sept": "september"}
STOPWORDS = frozenset(
    "a an the and or but if of to in on at by for with from as is are was were be been being am do does did "
    "i me my we our you your he him his she her it its they them their this that these those there here "
    "what which who whom how why where not no so than too very can could would should will shall "
    "might must have has had just about into over under all any both each few more most "
    "other some such only own same also s t d ll ve re m "
    # Chinese function words (as jieba cuts them)
    "的 了 是 在 和 与 也 都 就 吗 呢 吧 啊 呀 么 着 过 把 被 给 让 对 从 向 之 而 或 但 并 又 很 还 "
    "我 你 他 她 它 我们 你们 他们 她们 这 那 这个 那个 什么 哪 哪个 哪里 怎么 怎样 为什么 吗 一个 有 没有 "
    # Japanese particles
    "の は が を に で と も へ".split()
)
MAX_TERM = 48
_CN_NUMBER = {c: i for i, c in enumerate("一二三四五六七八九十", start=1)} | {"十一": 11, "十二": 12}

_ISO = re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)")
_CN_FULL = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")
_CN_YEAR_MONTH = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月")
_CN_MONTH_DAY = re.compile(r"(?<!\d)(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")
_CN_MONTH = re.compile(r"(?<![\d年])(\d{1,2}|十[一二]?|[一二三四五六七八九])\s*月(?!份?[\d])")
_CN_YEAR = re.compile(r"(\d{4})\s*年")
_ORDINAL = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\b")
_DIGIT = re.compile(r"\d")
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_KANA = "\u3040-\u30ff"
_HANGUL = "\uac00-\ud7af"
_TOKEN = re.compile(
    rf"(?P<han>[{_HAN}]+)|(?P<cjk>[{_KANA}]+|[{_HANGUL}]+)|(?P<num>\d+)|(?P<word>[^\W\d_{_HAN}{_KANA}{_HANGUL}]+)"
)
CJK = re.compile(f"[{_KANA}{_HAN}]")
HAN = re.compile(f"[{_HAN}]+")  # runs of Chinese characters
"""A Chinese or Japanese character."""
_STEMMER = Stemmer.Stemmer("english")
_CACHED_WORD = 64  # the longest word `stem` keeps in its cache
_HEADING = re.compile(r"\[(?:\d{1,2} [A-Z][a-z]+ \d{4}|\d{4}年\d{1,2}月\d{1,2}日)\] ")  # `dated_text`'s
_SHORT = "may|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec"  # a month's short name (or May) beside a day
_WHEN = re.compile(
    r"\b(?:today|tonight|yesterday|tomorrow|ago|weekend|(?:mon|tues|wednes|thurs|fri|satur|sun)days?"
    r"|(?:this|last|next) (?:morning|afternoon|evening|night|week|month|year)|(?:19|20)\d\d"
    r"|(?:january|february|march|april|june|july|august|september|october|november|december)"
    rf"|\d+ (?:{_SHORT})|(?:{_SHORT})\.? \d+)\b"
    r"|今天|今晚|今早|昨天|昨晚|明天|前天|后天|[上下本这]周|周末|星期|礼拜|[上下这]个?月|[去今明前]年"
)


def _month(number: str) -> str:
    value = _CN_NUMBER.get(number) or int(number)
    return MONTHS[value - 1] if 1 <= value <= 12 else number


def _dates(text: str) -> str:
    """Numeric and Chinese dates rewritten as words (day, month name, year). Pure."""
    chinese = "年" in text or "月" in text  # every Chinese form has one of them
    if not chinese and not _DIGIT.search(text):
        return text  # every other form has a digit
    text = _ISO.sub(lambda m: f" {int(m[3])} {_month(m[2])} {m[1]} ", text)
    if chinese:  # the numeric rewrite above adds neither character
        text = _CN_FULL.sub(lambda m: f" {int(m[3])} {_month(m[2])} {m[1]} ", text)
        text = _CN_YEAR_MONTH.sub(lambda m: f" {_month(m[2])} {m[1]} ", text)
        text = _CN_MONTH_DAY.sub(lambda m: f" {int(m[2])} {_month(m[1])} ", text)
        text = _CN_MONTH.sub(lambda m: f" {_month(m[1])} ", text)
        text = _CN_YEAR.sub(lambda m: f" {m[1]} ", text)
    return _ORDINAL.sub(_number_of, text)


def _number_of(ordinal: re.Match[str]) -> str:
    return ordinal[1]


def _prepared(text: str) -> str:
    """`text` as its words are found in it: NFKC, lower case, dates as words."""
    return _dates(unicodedata.normalize("NFKC", text).lower())


@remember
@functools.lru_cache(maxsize=200_000)
def stem(word: str, irregular: bool = True) -> str:
    """A Latin, Greek or Cyrillic word without accents, an irregular past form as its verb (unless not
    `irregular`: analysis "3"), stemmed by Snowball's English stemmer. Pure."""
    if not word.isascii():
        folded = "".join(c for c in unicodedata.normalize("NFD", word) if not unicodedata.combining(c))
        word = unicodedata.normalize("NFC", folded)
    word = _ABBREVIATIONS.get(word, word)
    if irregular:
        word = IRREGULAR.get(word, word)
    return str(_STEMMER.stemWord(word)) if word.isascii() else word


def _bigrams(run: str) -> Iterator[str]:
    if len(run) == 1:
        yield run
    for i in range(len(run) - 1):
        yield run[i : i + 2]


@text_cache(maxsize=65_536)
def _han(run: str, level: int) -> tuple[tuple[str, bool], ...]:
    """A run of Han characters as (term, whether it is a character of a longer word): jieba's search mode
    (each word, after the dictionary words of two and three characters inside it) and, from analysis "3",
    each word's characters after it when it has two or more. Segmented once per run (jieba costs tens of
    microseconds a run; questions and turns repeat their phrases)."""
    return tuple(_segmented(run, level))


def _segmented(run: str, level: int) -> Iterator[tuple[str, bool]]:
    if level == 2:
        yield from ((w, False) for w in segmenter.search_words(run) if w.strip())
        return
    for word in segmenter.words(run):  # what search mode does, keeping each word's place
        if not word.strip():
            continue
        for n in (2, 3):
            if len(word) > n:
                grams = (word[i : i + n] for i in range(len(word) - n + 1))
                yield from ((g, False) for g in grams if segmenter.in_dictionary(g))
        yield word, False
        if len(word) > 1 and word not in STOPWORDS:  # not 什 of 什么
            yield from ((c, True) for c in word)


def _words(prepared: str, level: int) -> list[tuple[str, bool]]:
    """(term, whether a character of a longer word) of a `_prepared` text, without stop words, each at most
    `MAX_TERM` characters: a Latin word's are found by its written form (and up to analysis "3" by its
    stem too)."""
    found: list[tuple[str, bool]] = []
    add, irregular = found.append, level >= 4
    for match in _TOKEN.finditer(prepared):
        kind, token = match.lastgroup, match[0]
        if kind == "word":
            if token in STOPWORDS:
                continue
            # a long "word" (no real one) is stemmed without the cache: nothing pins it in memory
            short = len(token) <= _CACHED_WORD
            word = stem(token, irregular) if short else stem.__wrapped__(token, irregular)
            if word not in STOPWORDS or irregular:
                add((word[:MAX_TERM], False))
        elif kind == "han":
            found += ((w[:MAX_TERM], c) for w, c in _han(token, level) if w not in STOPWORDS)
        elif kind == "cjk":
            found += ((b, False) for b in _bigrams(token) if b not in STOPWORDS)
        else:  # a number
            add(((token.lstrip("0") or "0" if len(token) <= 2 else token)[:MAX_TERM], False))
    return found


def dated(text: str) -> bool:
    """Whether `text` tells a time of its own (the day heading a dated index's document aside). Pure."""
    heading = _HEADING.match(text)
    return _dated(_prepared(text[heading.end() :] if heading else text))


def _dated(prepared: str) -> bool:
    return bool(_WHEN.search(prepared))


def _terms(text: str, level: int) -> list[tuple[str, bool]]:
    prepared = _prepared(text)
    found = _words(prepared, level)
    if level >= 4 and (dated(text) if _HEADING.match(text) else _dated(prepared)):
        found.append((DATED, False))
    return found


def terms(text: str, *, chars: bool = True, level: int = 4) -> list[str]:
    """Index terms of `text`, in order (see the module's docstring), each at most 48 characters; as
    analysis "3" with `level` 3, without `chars` as analysis "2" (no single characters of longer Chinese
    words). Pure."""
    return [w for w, _ in _terms(text, level if chars else 2)]


@text_cache(maxsize=4_096)
def _query(query: str) -> tuple[tuple[str, bool], ...]:
    """A query's terms, analysed once however many searches of one turn ask (facts, graph, recall). Its
    time words make no `DATED` term, which `query_weights` drops, unless it has no other term (what
    `searchable` counts): the scan for them is spared."""
    found = _words(_prepared(query), 4)
    return tuple(found) if found else tuple(_terms(query, 4))


def query_weights(query: str) -> dict[str, float]:
    """The terms of `query` (as `terms` gives them) and their weights: 1 for a word, `CHAR_WEIGHT` for a
    character of a longer Chinese word (1 when the query also has it as a word of its own). A query's own
    time words do not make it look for `DATED` (a "when" question does: `brain.search.query`). Pure."""
    weights: dict[str, float] = {}
    for term, char in _query(query):
        weight = CHAR_WEIGHT if char else 1.0
        if term != DATED and weight > weights.get(term, 0.0):
            weights[term] = weight
    return weights


def searchable(text: str) -> bool:
    """Whether `text` has anything a lexical search can look for (not only stop words or punctuation)."""
    return bool(_query(text))


def term_counts(text: str, *, chars: bool = True, level: int = 4) -> Counter[str]:
    return Counter(terms(text, chars=chars, level=level))


def bm25(
    tf: float, df: int, n_docs: int, doc_len: float, avg_len: float, k1: float = 1.2, b: float = 0.75
) -> float:
    """One term's BM25 contribution (Lucene's non-negative idf). Pure."""
    idf = math.log(1 + (n_docs - df + 0.5) / (df + 0.5))
    return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * doc_len / max(avg_len, 1e-9)))


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], k: int = 60) -> list[tuple[str, float]]:
    """Fuse ranked id lists: score = sum of 1 / (k + rank). Best first; ties by first appearance. Pure."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda item: -item[1])


@dataclass(frozen=True)
class Fusion:
    """How a hybrid search weighs its vector ranking (`fuse`): a property of the embedding model.

    `scale` `max` divides each cosine by the best one (the measured choice for all-MiniLM-L6-v2, which knows
    Chinese poorly: a small `weight` keeps it from pulling good lexical hits down); `range` spreads the
    candidates' cosines over [0, 1] (min to max), for a model whose cosines all sit close together
    (multilingual-e5-small: 0.8 to 0.9)."""

    weight: float = 0.2
    scale: Literal["max", "range"] = "max"


def fuse(
    lexical: Sequence[tuple[str, float]],
    vector: Sequence[tuple[str, float]],
    *,
    weight: float = 0.2,
    scale: Literal["max", "range"] = "max",
    linked: Sequence[str] = (),
    link_weight: float = 0.5,
) -> list[tuple[str, float]]:
    """Fuse a lexical and a vector ranking by their scores: the lexical divided by its best, the vector's
    scaled by `scale` (`Fusion`), then `(1 - weight) * lexical + weight * vector` (a document missing from
    one ranking scores 0 there), plus `link_weight` for each `linked` document (e.g. the turns a matching
    fact was learned from). Best first; ties by id. Pure.

    Measured on the dev set (`benchmarks/retrieval.py`): with all-MiniLM-L6-v2 (`max`, 0.2) this beat both
    inputs in both languages, where reciprocal rank fusion with equal weights did worse than lexical alone;
    with multilingual-e5-small, `range` at 0.5 (`benchmarks/out_of_box.py`)."""
    scores: dict[str, float] = {}
    best = max((s for _, s in lexical), default=0.0)
    for doc, score in lexical if best > 0 else ():
        scores[doc] = scores.get(doc, 0.0) + (1.0 - weight) * max(score, 0.0) / best
    if vector:
        top = max(s for _, s in vector)
        low = min(s for _, s in vector) if scale == "range" else 0.0
        for doc, score in vector if top > low else ():
            scores[doc] = scores.get(doc, 0.0) + weight * max(score - low, 0.0) / (top - low)
    for doc in dict.fromkeys(linked):
        scores[doc] = scores.get(doc, 0.0) + link_weight
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))
