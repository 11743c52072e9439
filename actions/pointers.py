"""Does a message point back at the conversation? The cheap lexical gate before refine_memory's LLM call,
in English and Chinese. Pure functions.

A message may need the conversation when it points back (it, that, there, 那里, 它), continues the last
message ("And tomorrow?", "What about Bergen?", "那明天呢？") or is a bare "why". What a narrative message
says of itself is not counted: a pronoun after the first clause ("I cleaned the flat, it took forever")
refers inside the message, and time words ("this morning", "last night", 这周), words that only look like
pointers (还是 "or", 该 "should", 之前 "before") and the "there" of a greeting ("hi there") are not
pointers. Measured on the dev conversations by `benchmarks/followups.py`.
"""

from __future__ import annotations

import re

from brain.search import segmenter
from brain.search.analysis import HAN, terms

__all__ = ["faithful", "points_back"]

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?", re.UNICODE)
_CLAUSE = re.compile(r"[,;:.!?，。；：！？\n]+")
_SENTENCE = re.compile(r"[.!?。！？\n]+")
_PRONOUNS = frozenset("it its it's itself he him his she her they them their theirs".split())
_DEMONSTRATIVES = frozenset(
    "that those these there same another else previous earlier former latter above ones".split()
)
_POINTERS = _PRONOUNS | _DEMONSTRATIVES
_CONTINUES = re.compile(
    r"^\W*(and|but|or|so|then|also|what about|how about|what if|same for|why not|why|how come)\b", re.I
)
_PRONOUNS_ZH = ("它", "他", "她")  # characters: jieba may join them to the next word (它贵)
_DEMONSTRATIVES_ZH = frozenset(
    "那里 那儿 那边 这里 这儿 这边 那个 这个 那些 这些 那家 这家 那位 这位 上面 上述 刚才 刚刚 同样 另一个 "
    "其他 其它 别的".split()
)
_CONTINUES_ZH = re.compile(
    r"(^\W*(那么?|还有|另外|然后|所以|但是?))|(呢\W*$)|(^\W*(为什么|为啥|怎么会|真的吗)\W*$)"
    r"|((再|多|具体|详细)(说说|讲讲|说一下|讲一下))"
)
_SHORT_WORDS, _SHORT_CHARS = 8, 12  # a message this short is read whole
_GREETING = re.compile(r"\b(?:hi|hello|hey|hiya|howdy|thanks|thank you)\s+there\b", re.I)  # not a place


def _lead(text: str, parts: re.Pattern[str], size: int = 3) -> str:
    """The first clause (or sentence) of `text`, with the next ones while it has fewer than `size` words
    (two Chinese characters counting as one). Each part is counted once: no word spans two."""
    lead, han, words = "", 0, 0
    for part in parts.split(text):
        lead = f"{lead} {part}".strip()
        if HAN.search(part):
            han += sum(map(len, HAN.findall(part)))
            part = HAN.sub(" ", part)
        words += len(_WORD.findall(part))
        if han // 2 + words >= size:
            break
    return lead


def _english(text: str) -> bool:
    if "there" in text.lower():
        text = _GREETING.sub(",", text)
    words = [w.lower() for w in _WORD.findall(text)]
    if not _POINTERS.intersection(words):
        return bool(_CONTINUES.search(text))
    short = len(words) <= _SHORT_WORDS
    if set(words if short else _WORD.findall(_lead(text, _CLAUSE).lower())) & _PRONOUNS:
        return True
    scope = words if short else [w.lower() for w in _WORD.findall(_lead(text, _SENTENCE))]
    return bool(set(scope) & _DEMONSTRATIVES) or bool(_CONTINUES.search(text))


def _chinese(text: str) -> bool:
    short = len(text) <= _SHORT_CHARS
    if any(p in (text if short else _lead(text, _CLAUSE)) for p in _PRONOUNS_ZH):
        return True
    scope = text if short else _lead(text, _SENTENCE)
    # segmented only when a demonstrative is in it at all (a word of the segmentation is a substring)
    if any(word in scope for word in _DEMONSTRATIVES_ZH) and set(segmenter.words(scope)) & _DEMONSTRATIVES_ZH:
        return True
    return bool(_CONTINUES_ZH.search(text))


def points_back(text: str) -> bool:
    """True when `text` may need an earlier conversation to be understood (see the module's rules)."""
    if not text.strip():
        return False
    return _english(text) or (bool(HAN.search(text)) and _chinese(text))


def faithful(rewritten: str, text: str, context: str, *, slack: float = 0.25) -> bool:
    """Whether a rewrite adds (almost) nothing the message and conversation do not say: at most `slack`
    of its content terms are new, and it has some. A model that answers instead of rewriting, or loops
    ("I'm not sure, I'm not sure"), fails. Pure."""
    own = set(terms(rewritten))
    if not own:
        return False
    new = own - set(terms(text)) - set(terms(context))
    return len(new) <= slack * len(own)
