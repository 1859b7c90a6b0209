"""The ``message_session`` tool: lets a session send a short note to another open session of the
project. The note is stored and reaches the receiver as context at its next turn (never as an
instruction that runs anything: the receiver's own permissions still decide each of its calls).

Permissions: the policy checks it as ``MessageSession(<receiver name>)``; with no rule it asks the
user (refused in ``plan`` mode). ``MessageSession`` allows sending to every session,
``MessageSession(api)`` to the session named api; "allow for this session" stores the latter.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from paragents.tools.base import Tool, ToolContext, ToolFamily, ToolResult

SendNote = Callable[[str, str, str], Awaitable[str]]
"""``async send(from_session_id, to_name, text) -> confirmation``; raises ValueError when refused."""

MAX_MESSAGE_CHARS = 4000
"""Longest note a session may send, in characters."""


class MessageSession(Tool):
    """Send a note to another open session of the project. Built with the runtime's ``send``."""

    name: ClassVar[str] = "message_session"
    family: ClassVar[ToolFamily] = "edit"
    description: ClassVar[str] = "Send a note to another open session (by name); it gets it at its next turn."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "text": {"type": "string", "maxLength": MAX_MESSAGE_CHARS},
        },
        "required": ["name", "text"],
        "additionalProperties": False,
    }
    """Kept short: the spec is sent with every request of every session."""

    def __init__(self, send: SendNote) -> None:
        self._send = send

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Send ``args["text"]`` to the session named ``args["name"]``; an error result when refused."""
        try:
            return ToolResult(await self._send(ctx.session_id, str(args["name"]), str(args["text"])))
        except ValueError as exc:
            return ToolResult(f"error: {exc}", is_error=True)

    def summarize(self, args: dict[str, Any]) -> str:
        """Return ``message_session NAME: text`` on one line."""
        return self._line(f"{args.get('name', '')}: {args.get('text', '')}")
