"""Tables of `benchmarks/storage.py`: bytes per key family, the summary, before/after a baseline."""

from __future__ import annotations

from typing import Any

from brain.backends.redis.stats import FamilyCost

__all__ = ["families_table", "summary", "total"]


def total(costs: list[FamilyCost], *, index: bool = True) -> int:
    """Bytes of every family; without `index`, of all but the recall index (what brain mode keeps)."""
    return sum(c.bytes for c in costs if index or not c.family.startswith("recall"))


def families_table(title: str, costs: list[FamilyCost], units: int, raw: int, unit: str = "turn") -> None:
    """Keys, bytes, bytes per `unit` and share of each family; the total against `raw` bytes of text."""
    whole = sum(c.bytes for c in costs) or 1
    keys = sum(c.keys for c in costs)
    print(f"\n{title}: {keys} keys, {whole:,} bytes; text {raw:,} bytes ({whole / max(raw, 1):.2f}×)")
    print(f"  {'family':<22} {'keys':>7} {'bytes':>12} {'bytes/' + unit:>11} {'share':>6}")
    for c in costs:
        per = c.bytes / max(units, 1)
        print(f"  {c.family:<22} {c.keys:>7} {c.bytes:>12,} {per:>11.1f} {100 * c.bytes / whole:>5.1f}%")


def summary(result: dict[str, Any], before: dict[str, Any] | None, rev: str | None) -> dict[str, Any]:
    """Prints the summary (and each JSON figure before → after with a baseline); the JSON figures, with
    `dev_recall_at_5_before` the baseline's (this run's without one), floats rounded to 3 places."""
    figures = dict(result["json"])
    raw = result["raw_per_turn"]
    print(f"\nraw UTF-8 bytes per turn (message contents): en {raw['en']:.1f}, zh {raw['zh']:.1f}")
    print(f"{'bytes ÷ raw':<11} | {'turns':>6} | {'brain':>6} | {'tiered':>6} | {'MetaGPT blob':>12}")
    for language, by_size in result["ratios"].items():
        for size, r in by_size.items():
            cells = f"{r['brain']:>5.2f}× | {r['tiered']:>5.2f}× | {r['metagpt']:>11.2f}×"
            print(f"{language:<11} | {int(size):>6} | {cells}")
    check = result["check"]
    print(
        f"the same 200 en turns, store-level path vs a real assistant: brain {check['brain'][0]:.2f}× vs "
        f"{check['brain'][1]:.2f}×, tiered {check['tiered'][0]:.2f}× vs {check['tiered'][1]:.2f}×"
    )
    print(
        f"bytes per fact: en {figures['bytes_per_fact']:.0f} (audit stream counted by deleting it: "
        f"{result['bytes_per_fact_checked']:.0f}), zh {result['bytes_per_fact_zh']:.0f}"
    )
    families = ", ".join(result["orphan_families"]) or "none"
    print(f"orphan keys after expiry: {figures['orphan_keys_after_expiry']} ({families})")
    print(
        f"fact queue: max XLEN {figures['queue_max_len']}, dead letters at the end {result['dead_letters']}"
    )
    if before is None:
        figures["dev_recall_at_5_before"] = figures["dev_recall_at_5_after"]
        print("no --baseline: dev_recall_at_5_before is this run's figure")
    else:
        figures["dev_recall_at_5_before"] = before["dev_recall_at_5_after"]
        print(f"\nbefore ({rev}) → after (this tree), and after ÷ before:")
        for key, after in figures.items():
            if key == "dev_recall_at_5_before":
                continue
            old = before.get(key)
            if isinstance(after, int | float) and isinstance(old, int | float):
                change = f"{after / old:.3f}" if old else "-"
                print(f"  {key:<28} {old:>10.3f} → {after:>10.3f}   {change}")
            else:
                print(f"  {key:<28} {old!s:>10} → {after!s:>10}")
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in figures.items()}
