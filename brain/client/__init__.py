"""A Python client of `brain serve`'s HTTP API: `AsyncBrainClient` (async) and `BrainClient` (blocking),
one method per route, typed with the models the server answers with (`brain.wire`), chat streamed as an
iterator of `ChatEvent`s, refusals as `ApiError`s per status (`brain.client.errors`).

    async with AsyncBrainClient("http://localhost:8080", api_key) as brain:
        async for event in brain.chat_stream("Where do I live now?", chat_id="trip"):
            print(event.text if event.kind == "delta" else "", end="")
"""

from brain.client.aio import AsyncBrainClient
from brain.client.errors import (
    ApiAuthError,
    ApiConflictError,
    ApiConnectionError,
    ApiError,
    ApiInputError,
    ApiNotFoundError,
    ApiRateLimitError,
    ApiServerError,
    ApiStreamError,
    ApiTooLargeError,
)
from brain.client.events import ChatEvent
from brain.client.sync import BrainClient

__all__ = [
    "ApiAuthError",
    "ApiConflictError",
    "ApiConnectionError",
    "ApiError",
    "ApiInputError",
    "ApiNotFoundError",
    "ApiRateLimitError",
    "ApiServerError",
    "ApiStreamError",
    "ApiTooLargeError",
    "AsyncBrainClient",
    "BrainClient",
    "ChatEvent",
]
