"""The Redis/Valkey backend: the only package that talks to Redis. Every client failure is translated into
`StoreError` once (`brain.backends.redis.client`)."""

from brain.backends.redis.backend import RedisBackend
from brain.backends.redis.client import RedisClient, connect
from brain.backends.redis.connection import RedisConnection
from brain.backends.redis.conversation import RedisMemoryStore

__all__ = ["RedisBackend", "RedisClient", "RedisConnection", "RedisMemoryStore", "connect"]
