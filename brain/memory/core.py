"""Core memory: the blocks of a tenant, stored by a `brain.storage.CoreBlockStore` (the prompt shows them
through `actions.memory_section.core_block_items`).

Every block is per tenant (`Place`): defaults (configured templates, shared blocks' seeds) are shown until
the tenant first edits a block, which copies the default into the tenant's own scope (`edit_block`), so no
edit reaches a default or another tenant's block."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from brain.errors import InputError
from brain.storage.blocks import Block, BlockLimitError, CoreBlockStore

__all__ = [
    "Block",
    "BlockLimitError",
    "Place",
    "edit_block",
    "ensure_blocks",
    "tenant_blocks",
]


async def ensure_blocks(store: CoreBlockStore, scope: str | bytes, blocks: Sequence[Block]) -> list[Block]:
    """Create the blocks of `scope` that do not exist yet (a concurrent creation is no error); every block
    of the scope."""
    existing = {b.label for b in await store.list(scope)}
    for block in blocks:
        if block.label not in existing:
            await _create(store, scope, block)
    return await store.list(scope)


async def _create(store: CoreBlockStore, scope: str | bytes, block: Block) -> None:
    """Store `block` unless its label exists in `scope` (stored meanwhile: no error)."""
    try:
        await store.create(scope, block)
    except InputError as exc:
        if "exists" not in str(exc):
            raise


class Place(BaseModel):
    """Where one block of a tenant lives: `scope` holds the tenant's own copy; until there is one, the block
    is the one of its label in `seed` (a shared block's scope) if stored there, else `template`."""

    model_config = ConfigDict(frozen=True)

    scope: bytes
    template: Block | None = None
    seed: bytes | None = None


async def _defaults(store: CoreBlockStore, places: Mapping[str, Place], labels: set[str]) -> dict[str, Block]:
    """The default of each of `labels`: its seed's block, else its template (each seed scope read once)."""
    seeds: dict[bytes, dict[str, Block]] = {}
    found: dict[str, Block] = {}
    for label in labels:
        place = places[label]
        if place.seed is not None and place.seed not in seeds:
            seeds[place.seed] = {b.label: b for b in await store.list(place.seed)}
        default = (seeds[place.seed].get(label) if place.seed is not None else None) or place.template
        if default is not None:
            found[label] = default
    return found


async def tenant_blocks(store: CoreBlockStore, places: Mapping[str, Place]) -> list[Block]:
    """The tenant's blocks in view, in `places`' order: each label's own copy, else its default (a label with
    neither is left out). Writes nothing."""
    own: dict[bytes, dict[str, Block]] = {}
    for place in places.values():
        if place.scope not in own:
            own[place.scope] = {b.label: b for b in await store.list(place.scope)}
    mine = {label: own[p.scope][label] for label, p in places.items() if label in own[p.scope]}
    defaults = await _defaults(store, places, set(places) - set(mine))
    return [mine.get(label) or defaults[label] for label in places if label in mine or label in defaults]


async def edit_block(
    store: CoreBlockStore,
    places: Mapping[str, Place],
    label: str,
    edit: Callable[[bytes], Awaitable[Block]],
) -> Block:
    """`edit(scope)` of the tenant's own copy of `label`, made from the default first if there is none
    (copy-on-write; a concurrent copy is no error). `InputError` for a label not in `places` and for a
    read-only default (nothing is copied then)."""
    if label not in places:
        raise InputError(f"there is no core memory block {label!r}; blocks: {', '.join(places)}")
    place = places[label]
    default = (await _defaults(store, places, {label})).get(label)
    if default is not None:
        if default.read_only:
            raise InputError(f"block {label!r} is read-only")
        await _create(store, place.scope, default)
    return await edit(place.scope)
