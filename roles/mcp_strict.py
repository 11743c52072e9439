"""An MCP server whose tools are strict: each input schema is closed (`additionalProperties: false`) and an
argument a tool does not take is refused with a tool error naming it (the SDK would drop it silently, so a
misspelt `limt` would quietly do something else than asked); invalid arguments are named, never echoed."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import ValidationError

from roles.failures import invalid_fields

__all__ = ["StrictServer"]


class StrictServer(MCPServer):
    """`MCPServer` with strict tools: call `seal()` once every tool is registered."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.takes: dict[str, frozenset[str]] = {}

    def seal(self) -> None:
        """Close every registered tool's input schema and record the arguments it takes."""
        for tool in self._tool_manager.list_tools():
            tool.parameters = {**tool.parameters, "additionalProperties": False}
            self.takes[tool.name] = frozenset(tool.parameters.get("properties", {}))

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        unknown = sorted(set(arguments) - self.takes.get(name, frozenset(arguments)))
        if unknown:
            listed = ", ".join(sorted(self.takes[name])) or "none"
            raise ToolError(f"{name} takes no argument {', '.join(map(repr, unknown))} (it takes: {listed})")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            # the SDK's text quotes the arguments it refused; say what is wrong where, as a 422 does
            wrong = "; ".join(
                f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in invalid_fields(exc.__cause__.errors())
            )
            raise ToolError(f"{name}: invalid arguments: {wrong}") from None
