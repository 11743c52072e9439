"""The HTTP service: the API, the MCP endpoint and the memory inspector page (`brain serve`)."""

from roles.http.app import create_app

__all__ = ["create_app"]
