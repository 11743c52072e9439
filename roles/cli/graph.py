"""`brain memory graph`: a user's graph memory as Mermaid, DOT or JSON text, or a picture through Graphviz."""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
from pathlib import Path

from brain.errors import InputError
from brain.memory.graph import Format, Neighbourhood, render
from brain.memory.tiers import Tiers
from brain.runtime import open_runtime
from brain.settings import Settings
from roles.service import as_of_time as when

__all__ = ["graph_command", "graph_text"]

_PICTURES = {".svg": "svg", ".png": "png"}
_TEXT: dict[str, Format] = {
    ".mmd": "mermaid",
    ".mermaid": "mermaid",
    ".dot": "dot",
    ".gv": "dot",
    ".json": "json",
}


async def graph_text(
    tiers: Tiers, user: str, entity: str | None, as_of: float | None, everything: bool
) -> Neighbourhood:
    """The whole graph (current relations, those true at `as_of`, or with `everything` all of them), or
    one entity's neighbourhood (current or as of)."""
    graph = tiers.graph
    if entity is None:
        return await graph.everything(user, as_of=as_of, current_only=not everything)
    found = await graph.resolve(user, [entity])
    if not found:
        raise InputError(f"graph memory of {user!r} knows no {entity!r}")
    return await graph.neighbourhood(user, list(found.values()), as_of=as_of, limit=500)


async def graph_command(settings: Settings, args: argparse.Namespace) -> int:
    out = Path(args.out) if args.out else None
    suffix = out.suffix.lower() if out else ""
    if out is not None and suffix not in _PICTURES and suffix not in _TEXT:
        raise InputError(f"--out {out}: write .svg or .png (Graphviz), or .mmd, .dot or .json")
    fmt: Format = "dot" if suffix in _PICTURES else args.format or _TEXT.get(suffix, "mermaid")
    async with open_runtime(settings, defer_model=True) as runtime:
        assert runtime.tiers is not None
        await runtime.tiers.present(args.user)
        as_of = when(args.as_of) if args.as_of else None
        graph = await graph_text(runtime.tiers, args.user, args.entity, as_of, args.all)
    text = render(graph, fmt)
    print(f"{len(graph.entities)} entities, {len(graph.relations)} relations", file=sys.stderr)
    if out is None:
        sys.stdout.write(text)
        return 0
    if suffix in _PICTURES:
        dot = shutil.which("dot")
        if dot is None:
            fallback = out.with_suffix(".mmd")
            fallback.write_text(render(graph, "mermaid"), encoding="utf-8")
            print(
                f"Graphviz (dot) is not installed: wrote Mermaid text to {fallback} instead", file=sys.stderr
            )
            return 0
        done = await asyncio.to_thread(
            subprocess.run,
            [dot, f"-T{_PICTURES[suffix]}", "-o", str(out)],
            input=text.encode(),
            capture_output=True,
            check=False,
        )
        if done.returncode != 0:
            raise InputError(f"Graphviz failed: {done.stderr.decode(errors='replace')[:300]}")
    else:
        out.write_text(text, encoding="utf-8")
    print(f"wrote {out}", file=sys.stderr)
    return 0
