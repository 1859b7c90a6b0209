"""MCP tools as agent tools: ``mcp__server__tool`` with the server's input schema, description and
annotations; a call goes to the pooled server and its result comes back as plain, capped text.

Permissions are the agent's (``policy.decide`` with the tool's name, ``read_only`` from
``readOnlyHint`` unless ``destructiveHint``); the approval bar shows the server, the tool's
description and the arguments (:meth:`McpTool.preview`)."""

from __future__ import annotations

import fnmatch
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, cast

from mcp import types

from paragents.mcp.server import McpServerError
from paragents.models import CallPreview
from paragents.tools.base import Tool, ToolArgumentError, ToolContext, ToolFamily, ToolResult, bounded_lines
from paragents.tools.output import cap_middle, shorten, strip_ansi

if TYPE_CHECKING:
    from paragents.mcp.server import ServerHandle

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
MAX_NAME = 64
"""Longest function name OpenAI-compatible servers accept."""
CHARS_PER_TOKEN = 4


def full_name(server: str, tool: str) -> str:
    """``mcp__server__tool`` with characters a function name may not hold replaced by ``_`` (max 64)."""
    return f"mcp__{_UNSAFE.sub('_', server)}__{_UNSAFE.sub('_', tool)}"[:MAX_NAME]


def offered(tool: str, enabled: tuple[str, ...] | None, disabled: tuple[str, ...]) -> bool:
    """True when ``tool`` (the server's name for it) passes ``enabledTools`` and ``disabledTools`` globs."""
    if enabled is not None and not any(fnmatch.fnmatchcase(tool, g) for g in enabled):
        return False
    return not any(fnmatch.fnmatchcase(tool, g) for g in disabled)


def schema_problem(tool: types.Tool) -> str | None:
    """Why ``tool``'s input schema cannot be offered (not an object schema, not valid JSON Schema)."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    schema = tool.inputSchema
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return "its input schema is not a JSON Schema object ('type': 'object')"
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return f"its input schema is invalid ({shorten(exc.message, 120)})"
    return None


class McpTool(Tool):
    """One tool of one pooled server (built by :func:`make_tool`; class attributes per tool)."""

    name: ClassVar[str] = "mcp"
    family: ClassVar[ToolFamily] = "edit"
    description: ClassVar[str] = ""
    parameters: ClassVar[dict[str, Any]] = {"type": "object"}
    server: ClassVar[str] = ""
    remote_name: ClassVar[str] = ""
    read_only: ClassVar[bool] = False
    """``readOnlyHint`` without ``destructiveHint``: the policy treats the call like a read."""
    destructive: ClassVar[bool] = False

    def __init__(self, handle: ServerHandle) -> None:
        self.handle = handle

    def validate(self, args: Any) -> dict[str, Any]:
        """Check ``args`` against the server's schema (it may allow more properties than it lists)."""
        if not isinstance(args, dict):
            raise ToolArgumentError(f"{self.name}: arguments must be a JSON object")
        from jsonschema import Draft202012Validator

        errors = sorted(Draft202012Validator(self.parameters).iter_errors(args), key=lambda e: list(e.path))
        if errors:
            raise ToolArgumentError(self._describe(errors[0]))
        return dict(args)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Call the tool on its server; errors (could not start, timeout, crash) are error results."""
        try:
            result = await self.handle.call(self.remote_name, args)
        except McpServerError as exc:
            return ToolResult(f"error: {exc}", is_error=True, meta={"server": self.server})
        limit = ctx.max_output_chars
        tokens = self.handle.settings.max_output_tokens
        if tokens is not None:
            limit = min(limit, tokens * CHARS_PER_TOKEN)
        text = cap_middle(strip_ansi(result_text(result)), limit)
        return ToolResult(text, is_error=bool(result.isError), meta={"server": self.server})

    def summarize(self, args: dict[str, Any]) -> str:
        """``mcp__server__tool {"a": 1}`` on one line."""
        return self._line(json.dumps(args, ensure_ascii=False))

    def preview(self, args: dict[str, Any], workdir: Path) -> CallPreview | None:
        """The server, the tool's description and the arguments, as plain text."""
        hints = [h for h, on in (("read-only", self.read_only), ("destructive", self.destructive)) if on]
        lines = [
            f"MCP server: {self.server} ({self.handle.entry.origin}, {self.handle.settings.transport})",
            f"tool: {self.remote_name}" + (f" [{', '.join(hints)}]" if hints else ""),
            f"description: {shorten(self.description, 300) or '(none)'}",
            "arguments:",
            json.dumps(args, indent=2, ensure_ascii=False),
        ]
        text, omitted = bounded_lines("\n".join(lines))
        return CallPreview(
            "content", text, f"MCP tool {self.remote_name} of server '{self.server}'", "", omitted
        )


def make_tool(handle: ServerHandle, tool: types.Tool) -> McpTool:
    """Build the agent tool for the server's ``tool`` (its schema must be valid: see schema_problem)."""
    notes = tool.annotations
    destructive = bool(notes and notes.destructiveHint)
    read_only = bool(notes and notes.readOnlyHint) and not destructive
    attrs = {
        "name": full_name(handle.name, tool.name),
        "description": strip_ansi(
            tool.description or tool.title or f"{tool.name} (MCP server {handle.name})"
        ),
        "parameters": tool.inputSchema,
        "server": handle.name,
        "remote_name": tool.name,
        "read_only": read_only,
        "destructive": destructive,
    }
    cls = cast("type[McpTool]", type("McpTool", (McpTool,), attrs))  # a subclass made at run time
    return cls(handle)


def result_text(result: types.CallToolResult) -> str:
    """The result's content as plain text: text parts as they are, others described in one line."""
    parts: list[str] = []
    for item in result.content:
        if isinstance(item, types.TextContent):
            parts.append(item.text)
        elif isinstance(item, types.ImageContent):
            parts.append(f"[image {item.mimeType}, {len(item.data) * 3 // 4} bytes]")
        elif isinstance(item, types.AudioContent):
            parts.append(f"[audio {item.mimeType}, {len(item.data) * 3 // 4} bytes]")
        elif isinstance(item, types.EmbeddedResource):
            res = item.resource
            if isinstance(res, types.TextResourceContents):
                parts.append(f"[resource {res.uri}]\n{res.text}")
            else:
                parts.append(f"[resource {res.uri}, binary]")
        elif isinstance(item, types.ResourceLink):
            parts.append(f"[resource link {item.uri}]")
    if not parts and result.structuredContent is not None:
        parts.append(json.dumps(result.structuredContent, ensure_ascii=False))
    return "\n".join(parts) if parts else "(no output)"
