"""Graph memory: entities and the relations between them, per user, time-aware."""

from brain.memory.graph.endings import ended_relation
from brain.memory.graph.links import graph_links, query_names
from brain.memory.graph.model import Entity, Neighbourhood, Relation, entity_id, name_key, relation_name
from brain.memory.graph.render import Format, render
from brain.memory.graph.store import GraphMemory

__all__ = [
    "Entity",
    "Format",
    "GraphMemory",
    "Neighbourhood",
    "Relation",
    "ended_relation",
    "entity_id",
    "graph_links",
    "name_key",
    "query_names",
    "relation_name",
    "render",
]
