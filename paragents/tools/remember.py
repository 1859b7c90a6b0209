"""The ``remember`` tool: lets the model store a session note (kept across compaction and restarts,
shown in the system prompt and by ``/memory``).

Permissions: the tool is outside Claude Code's Read/Edit/Bash families, so the policy checks it by
its name like an MCP tool: with no rule it asks the user (allowed at once in ``bypassPermissions``,
refused in ``plan`` mode); the rule ``remember`` in an allow list lets it run without asking, and
"allow for this session" answers store exactly that rule. It writes only the session's memory.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from paragents.tools.base import Tool, ToolContext, ToolFamily, ToolResult

SaveNote = Callable[[str, str], Awaitable[str]]
"""``async save(session_id, text) -> confirmation text``; raises ValueError for a refused note."""

MAX_NOTE_CHARS = 2000
"""Longest note the model may store, in characters."""


class Remember(Tool):
    """Store a short note for this session. Built with the callable that saves it (the runtime's)."""

    name: ClassVar[str] = "remember"
    family: ClassVar[ToolFamily] = "edit"
    description: ClassVar[str] = (
        "Store a short note for this session that stays in your instructions after the conversation is "
        "compacted and after restarts: a decision, a constraint, where something is. Use it sparingly."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "text": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_NOTE_CHARS,
                "description": "The note.",
            }
        },
        "required": ["text"],
        "additionalProperties": False,
    }

    def __init__(self, save: SaveNote) -> None:
        self._save = save

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Save ``args["text"]`` as a note of ``ctx.session_id``; an error result when refused."""
        try:
            return ToolResult(await self._save(ctx.session_id, str(args["text"])))
        except ValueError as exc:
            return ToolResult(f"error: {exc}", is_error=True)

    def summarize(self, args: dict[str, Any]) -> str:
        """Return ``remember <text>`` on one line."""
        return self._line(str(args.get("text", "")))
