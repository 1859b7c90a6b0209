"""The set of tools offered to the model, looked up by name.

:func:`default_registry` holds every built-in tool; the agent sends :meth:`ToolRegistry.specs` as
the request's ``tools`` and dispatches ``tool_calls`` by ``function.name`` through :meth:`get`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from paragents.tools.base import Tool
from paragents.tools.edit import EditFile, WriteFile
from paragents.tools.files import Glob, Grep, ListDir, ReadFile
from paragents.tools.shell import RunCommand


class ToolRegistry:
    """An ordered, name-unique collection of tools."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        """Register ``tools`` in order. Raises ValueError on a duplicate name."""
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        """Add ``tool``. Raises ValueError when a tool with the same name is already registered."""
        if tool.name in self._tools:
            raise ValueError(f"a tool named '{tool.name}' is already registered")
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        """Return the tool called ``name``, or None when there is none."""
        return self._tools.get(name)

    def names(self) -> list[str]:
        """Return the tool names in registration order."""
        return list(self._tools)

    def specs(self) -> list[dict[str, Any]]:
        """Return the request's ``tools`` list (OpenAI function-calling items), in registration order."""
        return [tool.spec() for tool in self._tools.values()]

    def unknown_tool_message(self, name: str) -> str:
        """Return the error text for a call to a tool that does not exist, listing the available ones."""
        shown = name if len(name) <= 80 else name[:79] + "…"
        return f"unknown tool '{shown}'; available tools: {', '.join(self._tools) or '(none)'}"

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)


def default_registry() -> ToolRegistry:
    """Return a new registry with every built-in tool: read_file, list_dir, glob, grep, write_file,
    edit_file, run_command."""
    return ToolRegistry([ReadFile(), ListDir(), Glob(), Grep(), WriteFile(), EditFile(), RunCommand()])


def unknown_tool_message(name: str, registry: ToolRegistry | None = None) -> str:
    """Return the error text for an unknown tool ``name`` (see :meth:`ToolRegistry.unknown_tool_message`);
    ``registry`` defaults to :func:`default_registry`."""
    return (registry or default_registry()).unknown_tool_message(name)
