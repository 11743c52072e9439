"""Agent files: a whole agent as one versioned JSON file (no secrets).

Settings (secrets removed), persona, core memory blocks, the conversation (summary and every raw turn),
archival passages and skill declarations. Export, import into an empty Redis, export again: the same file.
Embedding vectors are not stored; with an embedding model configured they are recomputed on import.
Both take an optional `Progress`: the turns read or written, the passages embedded, the turns indexed.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from brain.errors import ConflictError, InputError
from brain.memory.core import Block
from brain.memory.transfer import ConversationExport, export_conversation, import_conversation
from brain.progress import Progress
from brain.search.documents import embed_texts
from brain.search.index import IndexedDoc
from brain.settings import Settings
from brain.storage.conversation import Conversation
from roles.assistant import Assistant
from roles.modes import TieredMode
from roles.skills import SkillDeclaration

__all__ = ["AGENT_FORMAT", "AgentFile", "export_agent", "import_agent", "public_settings"]

AGENT_FORMAT = "brain-assistant.agent"


class ScopedBlock(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    scope: str
    block: Block


class AgentFile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    format: str = AGENT_FORMAT
    version: int = 1
    settings: dict[str, Any]
    agent: dict[str, str]
    core_blocks: tuple[ScopedBlock, ...] = ()
    conversation: ConversationExport
    archival: tuple[IndexedDoc, ...] = ()
    skills: tuple[SkillDeclaration, ...] = ()


def public_settings(settings: Settings) -> dict[str, Any]:
    """Settings as JSON with every secret removed (the Redis URL keeps its host, not its password)."""
    data = settings.model_dump(mode="json")
    data["llm"]["api_key"] = None
    for llm in data["llms"].values():
        llm["api_key"] = None
    data["redis"]["password"] = None
    data["redis"]["url"] = settings.redis.masked_url if settings.redis.url is not None else None
    data.pop("home", None)  # a path of this machine, not of the agent
    return data


async def export_agent(
    agent: Assistant, settings: Settings, user_id: str, chat_id: str, progress: Progress | None = None
) -> AgentFile:
    """The agent as it serves (user_id, chat_id): persona, that chat, and in the tiered mode the core blocks
    it sees and the user's archival memory."""
    persona = agent.persona.model_dump()
    persona.update(user_id=user_id, chat_id=chat_id, mode="brain")
    blocks: list[ScopedBlock] = []
    archival: list[IndexedDoc] = []
    if isinstance(agent.mode, TieredMode):
        persona["mode"] = "tiered"
        for scope in agent.mode.stored_scopes(agent.engine, user_id):
            text = scope.decode("utf-8", "surrogateescape")
            blocks += [ScopedBlock(scope=text, block=b) for b in await agent.tiers.core.list(scope)]
        archival = await agent.tiers.archival(user_id).all_docs()
    conversation = await export_conversation(agent.store, Conversation(user_id, chat_id), progress)
    return AgentFile(
        settings=public_settings(settings),
        agent=persona,
        core_blocks=tuple(blocks),
        conversation=conversation,
        archival=tuple(archival),
        skills=agent.skills.declarations,
    )


def parse_agent_file(data: str | bytes) -> AgentFile:
    try:
        agent = AgentFile.model_validate_json(data)
    except ValueError as exc:
        raise InputError(f"not a brain-assistant agent file: {str(exc).splitlines()[0]}") from None
    if agent.format != AGENT_FORMAT or agent.version != 1:
        raise InputError(f"unsupported agent file {agent.format!r} version {agent.version}")
    return agent


async def import_agent(
    file: AgentFile, agent: Assistant, user_id: str, chat_id: str, progress: Progress | None = None
) -> None:
    """Restore into `agent`'s stores as (user_id, chat_id); the chat and archival memory must be empty."""
    tiered = isinstance(agent.mode, TieredMode)
    archival = agent.tiers.archival(user_id) if tiered else None
    if archival is not None and await archival.count():
        raise ConflictError(f"archival memory of {user_id!r} is not empty; import into an empty one")
    await import_conversation(
        agent.store, file.conversation, Conversation(user_id, chat_id), progress=progress
    )
    if tiered and archival is not None:
        for item in file.core_blocks:
            scope = item.scope.encode("utf-8", "surrogateescape")
            await agent.tiers.core.create(scope, item.block, replace=True)
        embed = agent.tiers.embed
        texts = [archival.indexed_text(d) for d in file.archival]
        vectors = (
            await embed_texts(embed, texts, progress, task="embedding archival memory")
            if embed is not None and texts
            else None
        )
        await archival.add_many(list(file.archival), vectors)
        memory = await agent.memory_of(user_id, chat_id)
        await agent.mode.written(agent.engine, memory, progress)  # recall rebuilt from the imported turns
