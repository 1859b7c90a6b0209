"""Tools the model can call (OpenAI function-calling shape): file reading/search, editing, shell.

See :mod:`paragents.tools.base` for the contract and :func:`default_registry` for the set."""

from paragents.tools.base import Tool, ToolArgumentError, ToolContext, ToolResult
from paragents.tools.registry import ToolRegistry, default_registry, unknown_tool_message

__all__ = [
    "Tool",
    "ToolArgumentError",
    "ToolContext",
    "ToolRegistry",
    "ToolResult",
    "default_registry",
    "unknown_tool_message",
]
