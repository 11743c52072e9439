"""Graph memory: entities and the relations between them, per user, in plain Redis, time-aware."""

from brain.memory.graph.links import graph_links, query_names
from brain.memory.graph.model import Entity, Neighbourhood, Relation, entity_id, name_key, relation_name
from brain.memory.graph.render import Format, render
from brain.memory.graph.store import GraphStore

__all__ = [
    "Entity",
    "Format",
    "GraphStore",
    "Neighbourhood",
    "Relation",
    "entity_id",
    "graph_links",
    "name_key",
    "query_names",
    "relation_name",
    "render",
]
