"""`GET /v1/stats`: what the key's user's memory costs in Redis, per kind of memory and in all, with the
deployment's fact queue counters (`brain.backends.redis.stats.storage_report`)."""

from __future__ import annotations

from fastapi import APIRouter

from brain.backends.redis import RedisBackend
from brain.backends.redis.stats import StorageReport, storage_report
from brain.errors import InputError
from roles.http.guard import Refusal
from roles.http.routes import Service, Tenant

__all__ = ["stats_router"]

stats_router = APIRouter(prefix="/v1")


@stats_router.get("/stats", tags=["memory"])
async def stats(scope: Tenant, service: Service) -> StorageReport:
    """Keys and bytes per kind of memory (`recall.postings`, `facts`, `facts.audit`, `conversation`, ...)
    and in all, of the key's user (a user-wide key: the user's whole memory, shared by its agents), and
    the fact queue's counters (the deployment's: what waits, what was deferred or dropped at the bound,
    dead letters trimmed). It scans the keyspace: under the key's rate limit, not for polling."""
    if scope.agent is not None:
        raise Refusal(403, "storage statistics cover the user's whole memory: ask with a user-wide key")
    backend = service.runtime.backend
    if not isinstance(backend, RedisBackend):
        raise InputError("storage statistics read Redis; this service keeps memory elsewhere")
    return await storage_report(backend, scope.user)
