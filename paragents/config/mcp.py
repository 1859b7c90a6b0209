"""MCP settings (``mcp``, docs/mcp.md): one server's entry and the user-level servers and pool."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator


class McpServerSettings(BaseModel):
    """One MCP server (docs/mcp.md): Claude Code's ``.mcp.json`` entry shape (``command``/``args``/``env``
    for stdio, ``type: "http"``/``url``/``headers`` for Streamable HTTP) plus paragents' own keys.
    ``${VAR}`` (and ``${VAR:-default}``) in command, args, env, url and headers expand from the
    environment when the server starts; the values are never written back or shown."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    type: Literal["stdio", "http", "streamable-http", "sse"] | None = Field(
        None, description="Transport: stdio (default when 'command' is set) or http (Streamable HTTP)."
    )
    command: str | None = Field(None, description="Program of a stdio server (looked up in PATH).")
    args: tuple[str, ...] = Field((), description="Arguments of the stdio server's program.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment of a stdio server.")
    cwd: str | None = Field(None, description="Working directory of a stdio server (default: the project).")
    url: str | None = Field(None, description="URL of a Streamable HTTP server.")
    headers: dict[str, str] = Field(default_factory=dict, description="HTTP headers (e.g. Authorization).")
    enabled: bool = Field(True, description="false: configured but not started and no tools offered.")
    enabled_tools: tuple[str, ...] | None = Field(
        None,
        validation_alias=AliasChoices("enabledTools", "enabled_tools"),
        description="Globs of the tool names offered (default: all).",
    )
    disabled_tools: tuple[str, ...] = Field(
        (),
        validation_alias=AliasChoices("disabledTools", "disabled_tools"),
        description="Globs of tool names never offered (removed from the request's tools).",
    )
    startup_timeout: float = Field(
        30.0,
        gt=0,
        validation_alias=AliasChoices("startupTimeout", "startup_timeout"),
        description="Seconds the server has to start and answer initialize and tools/list.",
    )
    tool_timeout: float = Field(
        120.0,
        gt=0,
        validation_alias=AliasChoices("toolTimeout", "tool_timeout"),
        description="Seconds one tool call may take before it is a tool error.",
    )
    max_output_tokens: int | None = Field(
        None,
        gt=0,
        validation_alias=AliasChoices("maxOutputTokens", "max_output_tokens"),
        description="Cap on one result sent to the model, in tokens (~4 chars); default max_output_chars.",
    )
    scope: Literal["shared", "session"] = Field(
        "shared", description="shared: one process for every session of the project; session: one each."
    )
    concurrent: bool = Field(
        False, description="true: the server takes calls in parallel; false: calls to it are serialised."
    )
    idle_timeout: float = Field(
        600.0,
        ge=0,
        validation_alias=AliasChoices("idleTimeout", "idle_timeout"),
        description="Seconds without a call after which the server is stopped (0: never); it restarts "
        "on the next call.",
    )

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://", "${")):
            raise ValueError("must be an http(s) URL such as http://127.0.0.1:8000/mcp")
        return value

    @property
    def transport(self) -> Literal["stdio", "http", "sse"]:
        """stdio, http (Streamable HTTP) or sse (legacy), from ``type`` or the keys present."""
        if self.type in ("http", "streamable-http"):
            return "http"
        if self.type == "sse":
            return "sse"
        if self.type is None and self.command is None and self.url is not None:
            return "http"
        return "stdio"

    def problem(self) -> str | None:
        """Why this entry cannot start as written (no command for stdio, no url for http), or None."""
        if self.transport == "stdio" and not self.command:
            return "a stdio server needs a 'command' (or set type 'http' and a 'url')"
        if self.transport != "stdio" and not self.url:
            return f"a {self.transport} server needs a 'url'"
        return None


class McpSettings(BaseModel):
    """User-level MCP servers and the pool's settings (docs/mcp.md)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    servers: dict[str, McpServerSettings] = Field(
        default_factory=dict, description="User-level servers by name (a project .mcp.json adds more)."
    )
    context_share: float = Field(
        0.1,
        gt=0,
        le=1,
        description="/mcp offers to disable the unused tools of a server whose schemas cost more than "
        "this share of the context window.",
    )
