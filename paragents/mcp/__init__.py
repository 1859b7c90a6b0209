"""MCP client: servers from ``.mcp.json`` and ``runtime_config.json``, one shared pool of server
processes for every session of a project, and their tools as ``mcp__server__tool`` (docs/mcp.md).

Nothing here imports Textual; the agent asks the pool for a session's tools before each turn."""

import logging

from paragents.mcp.pool import McpPool, SessionMcp
from paragents.mcp.project import McpConfigError, ServerEntry, load_servers

__all__ = ["McpConfigError", "McpPool", "ServerEntry", "SessionMcp", "load_servers"]

logging.getLogger("mcp").addHandler(logging.NullHandler())  # the SDK's warnings never reach the terminal
