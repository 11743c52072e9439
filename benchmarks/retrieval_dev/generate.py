"""A seeded generator of long two-person conversations with questions and their evidence turns.

Each conversation has 20-30 dated sessions over months: small talk as distractor, dated events, persona facts
that change (a job, a home), facts told once, and remarks a question can only be inferred from. Questions come
in four kinds: `single` (one fact), `temporal` ("when" a thing happened, or what happened on a named day or
month), `multi` (two turns from different sessions) and `inference` (open-domain, sharing few words with the
evidence). Deterministic for a seed: `python -m benchmarks.retrieval_dev.generate en` prints a sample.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from types import ModuleType
from typing import Any

from benchmarks.retrieval_dev import en, zh

__all__ = ["Conversation", "Question", "Turn", "generate"]

PACKS: dict[str, ModuleType] = {"en": en, "zh": zh}


@dataclass(frozen=True)
class Turn:
    id: str
    speaker: str
    text: str
    ts: float


@dataclass(frozen=True)
class Question:
    id: str
    kind: str
    text: str
    evidence: tuple[str, ...]


@dataclass
class Conversation:
    speakers: tuple[str, str]
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


def _fill(rng: random.Random, template: str, pack: ModuleType, **values: str) -> str:
    names = {k: rng.choice(v) for k, v in pack.FILL.items()}
    return template.format(**{**names, **values})


def _values(
    rng: random.Random, slots: dict[str, list[str]], used: set[tuple[str, str]]
) -> dict[str, str] | None:
    """Slot values not used before in this conversation (each named thing happens once), or None."""
    chosen = {}
    for slot, options in slots.items():
        free = [o for o in options if (slot, o) not in used]
        if not free:
            return None
        chosen[slot] = rng.choice(free)
    used.update((s, v) for s, v in chosen.items() if s not in ("n",))
    return chosen


def conversation(language: str, number: int, seed: int) -> Conversation:
    pack = PACKS[language]
    rng = random.Random(f"{seed}-{language}-{number}")
    a, b = pack.NAMES[number % len(pack.NAMES)]
    conv = Conversation(speakers=(a, b))
    n_sessions = rng.randint(20, 30)
    day = date(2022, 1, 3) + timedelta(days=rng.randint(0, 200))
    days = []
    for _ in range(n_sessions):
        days.append(day)
        day += timedelta(days=rng.randint(4, 16))
    # What each session holds beyond small talk: (speaker, text, key) with key naming the question to ask.
    plan: list[list[tuple[str, str, Any]]] = [[] for _ in range(n_sessions)]
    used: set[tuple[str, str]] = set()
    for s in range(n_sessions):
        for _ in range(rng.choice([1, 1, 2])):
            event = rng.choice(pack.EVENTS)
            who = rng.choice((a, b))
            slots = {"city": pack.FILL["city"]} if "{city}" in event["say"] else {}
            values = _values(rng, {**slots, **event["slots"]}, used)
            if values is not None:
                plan[s].append((who, event["say"].format(**values), ("event", event, values)))
    for who in (a, b):
        for change in pack.CHANGES:
            values = _values(rng, change["slots"], used)
            assert values is not None
            first, then = rng.randrange(1, n_sessions // 2), rng.randrange(n_sessions // 2 + 2, n_sessions)
            plan[first].append((who, change["first"].format(**values), ("first", change, values)))
            plan[then].append((who, change["then"].format(**values), ("then", change, values)))
        for statement, question, slots in pack.FACTS:
            values = _values(rng, slots, used)
            if values is not None:
                plan[rng.randrange(n_sessions)].append(
                    (who, statement.format(**values), ("fact", question, values))
                )
    for statement, question in pack.INFERENCE:
        plan[rng.randrange(n_sessions)].append((rng.choice((a, b)), statement, ("inference", question, {})))

    told: dict[Any, list[tuple[str, str, Any, date]]] = {}
    for s, day in enumerate(days):
        ts = datetime(day.year, day.month, day.day, 18, rng.randint(0, 59), tzinfo=UTC).timestamp()
        specials = plan[s][:]
        rng.shuffle(specials)
        length = rng.randint(14, 22)
        slots = sorted(rng.sample(range(0, length - 1), min(len(specials), length - 1)))
        k = 0
        speaking = rng.choice((a, b))
        while k < length or specials:
            other = b if speaking == a else a
            if specials and (not slots or k >= slots[0]):
                slots = slots[1:]
                who, text, key = specials.pop(0)
                for line in (text, _fill(rng, rng.choice(pack.REPLIES), pack, other=who)):
                    turn_id = f"c{number}-s{s}-t{k}"
                    conv.turns.append(Turn(turn_id, who, line, ts + 60 * k))
                    if line == text:
                        told.setdefault(key[0], []).append((turn_id, who, key, day))
                    who = b if who == a else a
                    k += 1
                speaking = who
                continue
            conv.turns.append(
                Turn(
                    f"c{number}-s{s}-t{k}",
                    speaking,
                    _fill(rng, rng.choice(pack.SMALLTALK), pack, other=other),
                    ts + 60 * k,
                )
            )
            speaking, k = other, k + 1
    _ask(conv, pack, rng, told)
    return conv


def _ask(conv: Conversation, pack: ModuleType, rng: random.Random, told: dict[Any, list[Any]]) -> None:
    def ask(kind: str, text: str, *evidence: str) -> None:
        conv.questions.append(
            Question(f"{conv.turns[0].id.split('-')[0]}-q{len(conv.questions)}", kind, text, evidence)
        )

    events = told.get("event", [])
    for turn_id, who, (_, event, values), day in events:
        if rng.random() < 0.5:
            ask("temporal", event["when"].format(S=who, **values), turn_id)
            continue
        forms = pack.formats(day.year, day.month, day.day)
        same_month = [
            e
            for e in events
            if e[1] == who and e[2][1] is event and (e[3].year, e[3].month) == (day.year, day.month)
        ]
        form = rng.choice(forms if len(same_month) == 1 else forms[:-1])
        ask("temporal", event["what"].format(S=who, on_date=form, **values), turn_id)
    by_speaker: dict[str, list[Any]] = {}
    for e in events:
        by_speaker.setdefault(e[1], []).append(e)
    for who, mine in by_speaker.items():
        pairs = [(x, y) for x in mine for y in mine if x[3] < y[3] and x[2][1] is not y[2][1]]
        for x, y in rng.sample(pairs, min(4, len(pairs))):
            first, second = (x, y) if rng.random() < 0.5 else (y, x)
            text = pack.ORDER.format(
                S=who,
                a=first[2][1]["act"].format(**first[2][2]),
                b=second[2][1]["act"].format(**second[2][2]),
            )
            ask("multi", text, first[0], second[0])
    firsts = {(t[1], t[2][1]["first"]): t for t in told.get("first", [])}
    for turn_id, who, (_, change, values), _day in told.get("then", []):
        ask("single", change["single"].format(S=who, **values), turn_id)
        ask("multi", change["multi"].format(S=who, **values), firsts[(who, change["first"])][0], turn_id)
    for turn_id, who, (_, question, values), _day in told.get("fact", []):
        ask("single", question.format(S=who, **values), turn_id)
    for turn_id, who, (_, question, _values), _day in told.get("inference", []):
        ask("inference", question.format(S=who), turn_id)


def generate(language: str, *, seed: int = 2026, conversations: int = 5) -> list[Conversation]:
    """`conversations` conversations in `language` ("en" or "zh") with their questions. Deterministic."""
    return [conversation(language, n, seed) for n in range(conversations)]


if __name__ == "__main__":
    convs = generate(sys.argv[1] if len(sys.argv) > 1 else "en")
    kinds: dict[str, int] = {}
    for c in convs:
        for q in c.questions:
            kinds[q.kind] = kinds.get(q.kind, 0) + 1
    print(
        f"{sum(len(c.turns) for c in convs)} turns, {sum(len(c.questions) for c in convs)} questions: {kinds}"
    )
    first = convs[0]
    for t in first.turns[:30]:
        print(datetime.fromtimestamp(t.ts, UTC).date(), t.id, f"{t.speaker}: {t.text}")
    for q in first.questions[::6]:
        print(q.kind, q.text, q.evidence)
