"""The HTTP API's OpenAPI schema, kept in the repository (`docs/openapi.json`) so a change to the API is a
deliberate one: a test compares the app's schema with the file.

    python -m roles.http.openapi           # write docs/openapi.json from the app
    python -m roles.http.openapi --check   # exit 1 when the file differs from the app's schema
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path
from typing import Any

from brain.settings import Settings
from roles.http.app import create_app

__all__ = ["COMMITTED", "comparable", "current_schema", "main", "rendered"]

COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"
REGENERATE = "python -m roles.http.openapi"


def current_schema() -> dict[str, Any]:
    """The schema `brain serve` answers at `/openapi.json` (it does not depend on settings)."""
    return create_app(Settings()).openapi()


def rendered(schema: dict[str, Any]) -> str:
    """The schema as the file holds it. Pure."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def comparable(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema without what changes with every release (`info.version`). Pure."""
    out = copy.deepcopy(schema)
    out.get("info", {}).pop("version", None)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=REGENERATE, description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=COMMITTED)
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 when they differ")
    args = parser.parse_args(argv)
    schema = current_schema()
    if args.check:
        kept = json.loads(args.path.read_text(encoding="utf-8")) if args.path.exists() else {}
        if comparable(kept) != comparable(schema):
            print(f"{args.path} is not the app's schema: run `{REGENERATE}`", file=sys.stderr)
            return 1
        return 0
    args.path.parent.mkdir(parents=True, exist_ok=True)
    args.path.write_text(rendered(schema), encoding="utf-8")
    print(f"wrote {args.path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
