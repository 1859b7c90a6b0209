"""Slash commands of a session's external ACP agent in its prompt box (no Textual import: pure).

The agent advertises its commands (``available_commands_update``); the prompt box offers them in its
completion after paragents' own, each marked with the agent's name ("· qwen"), and a line invoking one
is sent to the agent as the prompt, unchanged (ACP: a command is run by prompting "/name args").
paragents' command of the same name wins; ``//name args`` reaches the agent's (sent as "/name args").
In such a session ``/mode`` and ``/model`` take any argument (or none): they address the agent's
modes and models (``paragents.sessions.acp_controls``)."""

from __future__ import annotations

from paragents import events as ev
from paragents.ui.core.commands import COMMANDS, SlashCommand

PARAGENTS_NAMES = frozenset(spec.name for spec in COMMANDS)
AGENT_ADDRESSED = ("mode", "model")
"""paragents commands that address the agent's own modes and models in an ACP session."""


def _head(text: str) -> tuple[str, str]:
    """The first word of ``text`` (stripped) and the rest."""
    parts = text.strip().split(maxsplit=1)
    return (parts[0], parts[1] if len(parts) > 1 else "") if parts else ("", "")


def agent_matches(prefix: str, agent: ev.AgentControlsChanged | None) -> list[tuple[str, str]]:
    """The agent's commands ((name, description)) whose "/name" (or "//name") starts with ``prefix``
    (the line so far, without a space)."""
    if agent is None or not prefix.startswith("/") or " " in prefix.strip():
        return []
    head = prefix.strip()[1:]
    head = head[1:] if head.startswith("/") else head
    return [(name, desc) for name, desc in agent.commands if name.lower().startswith(head.lower())]


def agent_prompt(text: str, agent: ev.AgentControlsChanged | None) -> str | None:
    """The prompt to send to the agent when ``text`` invokes one of its commands: "/name args" (name
    not a paragents command) unchanged, "//name args" as "/name args"; None otherwise."""
    if agent is None:
        return None
    head, _ = _head(text)
    names = {name for name, _ in agent.commands}
    if head.startswith("//") and head[2:] in names:
        return text.strip()[1:]
    if head.startswith("/") and not head.startswith("//") and head[1:] in names:
        ours = head[1:].lower() in PARAGENTS_NAMES or head.startswith("/mcp__")
        return None if ours else text.strip()
    return None


def agent_command(text: str, agent: ev.AgentControlsChanged | None) -> SlashCommand | None:
    """``/mode [ID]`` or ``/model [ID]`` in an ACP session: the command for the agent's modes or
    models (any argument; the agent says which exist); None otherwise."""
    if agent is None:
        return None
    head, rest = _head(text)
    name = head[1:].lower() if head.startswith("/") else ""
    if name not in AGENT_ADDRESSED:
        return None
    return SlashCommand(name, " ".join(rest.split()) or None)
