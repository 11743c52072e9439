"""Pictures of a graph: Mermaid, Graphviz DOT and JSON text. Pure."""

from __future__ import annotations

import json
from typing import Literal

from brain.memory.graph.model import Neighbourhood, day

__all__ = ["Format", "render"]

Format = Literal["mermaid", "dot", "json"]


def _day(ts: float | None) -> str | None:
    return None if ts is None else day(ts)


def _quote(text: str, quote: str) -> str:
    return text.replace("\\", "\\\\").replace(quote, "\\" + quote).replace("\n", " ")


def render(graph: Neighbourhood, fmt: Format) -> str:
    """`graph` as Mermaid (`flowchart LR`), DOT (`digraph`) or JSON; retired relations dashed."""
    ids = {
        e: f"n{i}"
        for i, e in enumerate(
            sorted({*graph.entities, *(x for r in graph.relations for x in (r.source, r.target))})
        )
    }

    def name(entity: str) -> str:
        known = graph.entities.get(entity)
        return known.name if known else entity

    if fmt == "json":
        return json.dumps(
            {
                "entities": [
                    {
                        "id": e.id,
                        "name": e.name,
                        "type": e.type,
                        "aliases": list(e.aliases),
                        "mentions": e.mentions,
                    }
                    for e in sorted(graph.entities.values(), key=lambda e: e.name)
                ],
                "relations": [
                    {
                        "id": r.id,
                        "source": r.source,
                        "relation": r.relation,
                        "target": r.target,
                        "valid_at": _day(r.valid_at),
                        "invalid_at": _day(r.invalid_at),
                        "created_at": _day(r.created_at),
                        "expired_at": _day(r.expired_at),
                        "fact_id": r.fact_id,
                        "source_turns": list(r.source_turns),
                    }
                    for r in graph.relations
                ],
            },
            ensure_ascii=False,
            indent=2,
        )
    if fmt == "dot":
        lines = [
            "digraph memory {",
            "  rankdir=LR;",
            '  node [shape=box, style=rounded, fontname="sans-serif"];',
        ]
        lines += [f'  {n} [label="{_quote(name(e), chr(34))}"];' for e, n in ids.items()]
        for r in graph.relations:
            style = "" if r.current else ", style=dashed"
            lines.append(
                f'  {ids[r.source]} -> {ids[r.target]} [label="{_quote(r.relation, chr(34))}"{style}];'
            )
        return "\n".join([*lines, "}"]) + "\n"
    lines = ["flowchart LR"]
    lines += [
        f'  {n}["{_quote(name(e), chr(34)).replace(chr(92) + chr(34), "#quot;")}"]' for e, n in ids.items()
    ]
    for r in graph.relations:
        arrow = "-->" if r.current else "-.->"
        lines.append(f"  {ids[r.source]} {arrow}|{r.relation.replace('|', ' ')}| {ids[r.target]}")
    return "\n".join(lines) + "\n"
