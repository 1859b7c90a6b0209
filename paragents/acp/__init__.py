"""External agents (Agent Client Protocol) as paragents sessions, under paragents' one permission
layer and conflict checks (docs/acp.md). Nothing here imports Textual."""

from paragents.acp.launch import BUILTIN_AGENTS, AgentSpec, AgentUnavailable, find_program, resolve_agent

__all__ = ["BUILTIN_AGENTS", "AgentSpec", "AgentUnavailable", "find_program", "resolve_agent"]
