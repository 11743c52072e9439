"""Implementations of the storage protocols (`brain.storage`): `brain.backends.redis` (Redis 7+ and Valkey,
standalone or Cluster; the only package that talks to Redis) and `brain.backends.memory` (a reference
backend in process memory, for tests and tiny embedded uses; never a silent fallback)."""

__all__: list[str] = []
