"""A seeded generator of the dated dev set: per language, conversations of 13-16 dated sessions between a
user and the assistant, and about 31 questions each (`TYPES` of `dated_model`), asked in the first person.

Each fact is worded apart from its question and has distractor lines on the same topic in other sessions;
every event happens twice (other values, weeks apart), so a question about "last month" is told apart only by
the dates; a changing value is told 2-3 times and only its last telling is the evidence. Deterministic for a
seed: `python -m benchmarks.retrieval_dev.dated_generate en` prints counts and a sample."""

from __future__ import annotations

import random
import sys
from datetime import UTC, date, datetime, time, timedelta
from types import ModuleType
from typing import Any

from benchmarks.retrieval_dev import dated_en, dated_zh
from benchmarks.retrieval_dev.dated_model import DatedConversation, DatedQuestion, DatedSession, DatedTurn
from benchmarks.retrieval_dev.dated_time import windows

__all__ = ["dated_conversation", "generate_dated"]

PACKS: dict[str, ModuleType] = {"en": dated_en, "zh": dated_zh}
QUOTA = {"single": 7, "preference": 5, "events": 4, "order": 2, "bridges": 4, "latest": 5}
ASKED_HOUR = time(20, 0, tzinfo=UTC)
Draft = tuple[str, str, str, tuple[str, ...], date | None]  # type, text, answer, evidence tags, day asked


class _Plan:
    """What each session's user says beyond small talk (text and an evidence tag), and the questions."""

    def __init__(self, rng: random.Random, sessions: int) -> None:
        self.rng, self.sessions = rng, sessions
        self.lines: list[list[tuple[str, str | None]]] = [[] for _ in range(sessions)]
        self.drafts: list[Draft] = []

    def say(self, session: int, text: str) -> str:
        tag = f"e{sum(len(x) for x in self.lines)}"
        self.lines[session].append((text, tag))
        return tag

    def noise(self, text: str, avoid: set[int]) -> None:
        free = [s for s in range(self.sessions) if s not in avoid]
        self.lines[self.rng.choice(free)].append((text, None))


def _values(rng: random.Random, slots: dict[str, list[str]]) -> dict[str, str]:
    return {slot: rng.choice(options) for slot, options in slots.items()}


def _facts(plan: _Plan, families: list[dict[str, Any]], kind: str, count: int) -> None:
    rng = plan.rng
    for family in rng.sample(families, count):
        values = _values(rng, family["slots"])
        session = rng.randrange(plan.sessions)
        tag = plan.say(session, rng.choice(family["say"]).format(**values))
        for line in rng.sample(family["noise"], rng.randint(1, len(family["noise"]))):
            plan.noise(line.format(**values), {session})
        question = rng.choice(family["ask"]).format(**values)
        plan.drafts.append((kind, question, family["answer"].format(**values), (tag,), None))


def _events(plan: _Plan, pack: ModuleType, days: list[date]) -> None:
    """Each chosen event twice, weeks apart; a question per telling ("when", or "what" in a window); then
    `order` questions on two events of different kinds."""
    rng = plan.rng
    told: list[tuple[int, str, str]] = []  # session, tag, act
    for family in rng.sample(pack.EVENTS, QUOTA["events"]):
        twins = [dict(zip(family["slots"], pair, strict=True)) for pair in _pairs(rng, family)]
        while True:
            first, second = sorted(rng.sample(range(plan.sessions), 2))
            if (days[second] - days[first]).days >= 20:
                break
        for session, other, values in ((first, second, twins[0]), (second, first, twins[1])):
            tag = plan.say(session, rng.choice(family["say"]).format(**values))
            told.append((session, tag, family["act"].format(**values)))
            fits = [w for w in windows(days[session], rng) if not w.start <= days[other] <= w.end]
            if fits and rng.random() < 0.65:
                w = rng.choice(fits)
                text = rng.choice(family["what"]).format(rel=pack.relative(w.kind, days[session], w.n))
                plan.drafts.append(("temporal", text, values[next(iter(values))], (tag,), w.asked))
            else:
                text = rng.choice(family["when"]).format(**values)
                plan.drafts.append(("temporal", text, days[session].isoformat(), (tag,), None))
        plan.noise(family["noise"], {first, second})
    pairs = [(x, y) for x in told for y in told if x[0] < y[0] and x[2] != y[2]]
    for x, y in rng.sample(pairs, QUOTA["order"]):
        a, b = (x, y) if rng.random() < 0.5 else (y, x)
        plan.drafts.append(
            ("multi_hop", rng.choice(pack.ORDER).format(a=a[2], b=b[2]), x[2], (a[1], b[1]), None)
        )


def _pairs(rng: random.Random, family: dict[str, Any]) -> list[tuple[str, ...]]:
    columns = [rng.sample(options, 2) for options in family["slots"].values()]
    return [tuple(c[i] for c in columns) for i in range(2)]


def _bridges(plan: _Plan, bridges: dict[str, Any]) -> None:
    rng = plan.rng
    relations = rng.sample(bridges["relations"], QUOTA["bridges"])
    names = rng.sample(bridges["names"], QUOTA["bridges"])
    used: set[str] = set()
    for rel, name in zip(relations, names, strict=True):
        family = rng.choice(bridges["facts"])
        values = {s: rng.choice([o for o in opts if o not in used]) for s, opts in family["slots"].items()}
        used.update(values.values())
        values |= {"rel": rel, "name": name}
        intro = rng.randrange(plan.sessions - 1)
        later = rng.randrange(intro + 1, plan.sessions)
        first = plan.say(intro, rng.choice(bridges["intro"]).format(**values))
        second = plan.say(later, rng.choice(family["say"]).format(**values))
        if rng.random() < 0.5:
            plan.noise(rng.choice(bridges["noise"]).format(**values), {intro, later})
        text = rng.choice(family["ask"]).format(**values)
        plan.drafts.append(("multi_hop", text, family["answer"].format(**values), (first, second), None))


def _latest(plan: _Plan, changes: list[dict[str, Any]]) -> None:
    rng = plan.rng
    for change in rng.sample(changes, QUOTA["latest"]):
        k = rng.choice((2, 3, 3))
        options = change["values"]
        if change.get("ordered"):
            start = rng.randrange(len(options) - k + 1)
            values = options[start : start + k]
        else:
            values = rng.sample(options, k)
        sessions = sorted(rng.sample(range(plan.sessions), k))
        tag = ""
        for i, (session, value) in enumerate(zip(sessions, values, strict=True)):
            tag = plan.say(session, rng.choice(change["then" if i else "first"]).format(v=value))
        plan.drafts.append(("latest", rng.choice(change["ask"]), values[-1], (tag,), None))


def dated_conversation(language: str, number: int, seed: int) -> DatedConversation:
    pack = PACKS[language]
    rng = random.Random(f"dated-{seed}-{language}-{number}")
    cid = f"{language}{number}"
    user = pack.NAMES[number % len(pack.NAMES)]
    day = date(2023, 1, 2) + timedelta(days=rng.randint(0, 150))
    days = []
    for _ in range(rng.randint(13, 16)):
        days.append(day)
        day += timedelta(days=rng.randint(3, 10))
    plan = _Plan(rng, len(days))
    _facts(plan, pack.SINGLE, "single", QUOTA["single"])
    _facts(plan, pack.PREFERENCE, "preference", QUOTA["preference"])
    _events(plan, pack, days)
    _bridges(plan, pack.BRIDGES)
    _latest(plan, pack.LATEST)
    sessions, where = [], {}
    for s, day in enumerate(days):
        lines = plan.lines[s] + [
            (rng.choice(pack.SMALLTALK).format(**_values(rng, pack.FILL)), None)
            for _ in range(rng.randint(2, 4))
        ]
        rng.shuffle(lines)
        at = datetime.combine(day, time(rng.randint(8, 19), rng.randint(0, 59), tzinfo=UTC))
        turns: list[DatedTurn] = []
        for text, tag in lines:
            for role, said in (("user", text), ("assistant", rng.choice(pack.REPLIES))):
                turn_id = f"{cid}-s{s}-t{len(turns)}"
                name = user if role == "user" else pack.ASSISTANT or "Assistant"
                turns.append(
                    DatedTurn(id=turn_id, session_id=f"{cid}-s{s}", role=role, speaker=name, text=said, at=at)
                )
                at += timedelta(minutes=rng.randint(1, 3))
                if tag is not None and role == "user":
                    where[tag] = (turn_id, f"{cid}-s{s}")
        sessions.append(DatedSession(id=f"{cid}-s{s}", day=day, turns=tuple(turns)))
    end = days[-1] + timedelta(days=rng.randint(1, 5))
    questions = []
    for i, (kind, text, answer, tags, asked) in enumerate(plan.drafts):
        turn_ids = tuple(where[t][0] for t in tags)
        session_ids = tuple(dict.fromkeys(where[t][1] for t in tags))
        asked_at = datetime.combine(asked or end, ASKED_HOUR)
        questions.append(
            DatedQuestion(
                id=f"{cid}-q{i}", type=kind, language=language, asked_at=asked_at, text=text, answer=answer,
                evidence_turns=turn_ids, evidence_sessions=session_ids,
            )
        )  # fmt: skip
    return DatedConversation(
        id=cid, language=language, user=user, sessions=tuple(sessions), questions=tuple(questions)
    )


def generate_dated(language: str, *, seed: int = 2027, conversations: int = 10) -> list[DatedConversation]:
    """`conversations` dated conversations in `language` ("en" or "zh"), with questions. Deterministic."""
    return [dated_conversation(language, n, seed) for n in range(conversations)]


if __name__ == "__main__":
    convs = generate_dated(sys.argv[1] if len(sys.argv) > 1 else "en")
    types: dict[str, int] = {}
    for c in convs:
        for q in c.questions:
            types[q.type] = types.get(q.type, 0) + 1
    turns = sum(len(c.turns) for c in convs)
    print(f"{len(convs)} conversations, {turns} turns, {sum(types.values())} questions: {types}")
    first = convs[0]
    for t in first.turns[:24]:
        print(t.at.isoformat(timespec="minutes"), t.id, f"{t.speaker}: {t.text}")
    for q in first.questions[::3]:
        print(q.type, q.asked_at.date(), q.text, "->", q.answer, q.evidence_turns)
