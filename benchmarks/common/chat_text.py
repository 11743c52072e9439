"""Deterministic chat text for storage benchmarks, in English or Chinese, from the retrieval dev set's
sentence packs (`benchmarks/retrieval_dev`): a user turn is 1-3 generated sentences (about 60-200 UTF-8
bytes), an assistant reply 3-6 (about 120-500). Messages are shaped as the engine writes them
(`roles.engine`): 32-hex ids, the user's `sent_from="user"`, the answer's `role="assistant"`, `sent_from`
the persona's name, `cause_by="TalkAction"`; an exchange every 3 minutes, 20 a day. Also the same turns as
one MetaGPT `BrainMemory` JSON blob (`metagpt_blob`), as MetaGPT 0.8.2's `model_dump_json()` writes it."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from typing import Any

from benchmarks.retrieval_dev.generate import generate
from brain.message import Message

__all__ = ["Exchange", "exchanges", "metagpt_blob", "raw_bytes"]

Exchange = tuple[Message, Message]
_START = datetime(2025, 1, 6, 8, 0, tzinfo=UTC)
_SEEDS = (2026, 2027, 2028, 2029)  # the dev set's seed and three more: a wider vocabulary


def _sentences(language: str) -> list[str]:
    """Every distinct generated sentence of the language, in a fixed order."""
    seen: dict[str, None] = {}
    for seed in _SEEDS:
        for conv in generate(language, seed=seed, conversations=5):
            for turn in conv.turns:
                seen.setdefault(turn.text, None)
    return list(seen)


def _join(language: str, parts: list[str]) -> str:
    return ("" if language == "zh" else " ").join(parts)


def exchanges(language: str, count: int, *, seed: int = 30, speaker: str = "Lily") -> list[Exchange]:
    """`count` (question, answer) pairs in `language` ("en" or "zh"). Deterministic for `seed`."""
    pool = _sentences(language)
    rng = random.Random(f"storage-{language}-{seed}")
    out: list[Exchange] = []
    for n in range(count):
        asked: list[str] = []
        while not asked or (len(_join(language, asked).encode()) < 60 and len(asked) < 3):
            asked.append(rng.choice(pool))
        replied = [rng.choice(pool) for _ in range(rng.randint(3, 6))]
        at = _START + timedelta(days=n // 20, minutes=3 * (n % 20))
        question = Message(
            id=f"{rng.getrandbits(128):032x}", content=_join(language, asked), sent_from="user", created_at=at
        )
        answer = Message(
            id=f"{rng.getrandbits(128):032x}",
            role="assistant",
            content=_join(language, replied),
            sent_from=speaker,
            cause_by="TalkAction",
            created_at=at + timedelta(seconds=20),
        )
        out.append((question, answer))
    return out


def raw_bytes(pairs: list[Exchange]) -> int:
    """UTF-8 bytes of the messages' contents."""
    return sum(len(m.content.encode()) for pair in pairs for m in pair)


def _metagpt_message(message: Message) -> dict[str, Any]:
    """A message as MetaGPT's `Message` dumps it (defaults validated: `cause_by` the UserRequirement
    action's path, `send_to` {"<all>"})."""
    return {
        "id": message.id,
        "content": message.content,
        "instruct_content": None,
        "role": message.role,
        "cause_by": "metagpt.actions.add_requirement.UserRequirement",
        "sent_from": "",
        "send_to": ["<all>"],
        "metadata": {},
    }


def metagpt_blob(pairs: list[Exchange]) -> str:
    """The turns as one MetaGPT `BrainMemory` JSON (compact, non-ASCII kept as UTF-8, as pydantic writes)."""
    history = [_metagpt_message(m) for pair in pairs for m in pair]
    memory = {
        "history": history,
        "knowledge": [],
        "historical_summary": "",
        "last_history_id": history[-1]["id"] if history else "",
        "is_dirty": False,
        "last_talk": None,
        "cacheable": True,
    }
    return json.dumps(memory, ensure_ascii=False, separators=(",", ":"))
