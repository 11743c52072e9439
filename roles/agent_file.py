"""Agent files: a whole agent as one versioned JSON file (no secrets).

Settings (secrets removed), persona, core memory blocks, the conversation (summary and every raw turn),
archival passages and skill declarations. Export, import into an empty Redis, export again: the same file.
Embedding vectors are not stored; with an embedding model configured they are recomputed on import.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from brain.core_memory import Block
from brain.errors import ConflictError, InputError
from brain.search_index import IndexedDoc
from brain.settings import Settings
from brain.store import Conversation
from brain.transfer import ConversationExport, export_conversation, import_conversation
from roles.assistant import Assistant
from roles.skills import SkillDeclaration
from roles.tiered import TieredAssistant

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


async def export_agent(agent: Assistant, settings: Settings) -> AgentFile:
    persona = agent.persona.model_dump()
    persona.update(user_id=agent.user_id, chat_id=agent.chat_id, mode="brain")
    blocks: list[ScopedBlock] = []
    archival: list[IndexedDoc] = []
    if isinstance(agent, TieredAssistant):
        persona["mode"] = "tiered"
        for scope in sorted(set(agent.scopes().values())):
            blocks += [ScopedBlock(scope=scope, block=b) for b in await agent.core.list(scope)]
        archival = await agent.tools().archival.all_docs()
    conversation = await export_conversation(agent.store, Conversation(agent.user_id, agent.chat_id))
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


async def import_agent(file: AgentFile, agent: Assistant) -> None:
    """Restore into `agent`'s stores; its conversation and archival memory must be empty."""
    if isinstance(agent, TieredAssistant):
        archival = agent.tools().archival
        if await archival.count():
            raise ConflictError(
                f"archival memory of {agent.user_id!r} is not empty; import into an empty one"
            )
    await import_conversation(agent.store, file.conversation, Conversation(agent.user_id, agent.chat_id))
    if isinstance(agent, TieredAssistant):
        for item in file.core_blocks:
            await agent.core.create(item.scope, item.block, replace=True)
        vectors = (
            await agent.llm.embed([d.text for d in file.archival])
            if agent.embeddings and file.archival
            else None
        )
        await archival.add_many(list(file.archival), vectors)
        await agent.sync_recall()  # recall memory is rebuilt from the imported turns
