"""The MCP facet of the session layer (:class:`Mcp`): ``/mcp`` and the overview's MCP section (each
server's state, PID, RSS, tools, the sessions using it, its last error and the tail of its stderr log,
and what its tool schemas cost this session's context, with the unused tools to disable when a server
costs more than ``mcp.context_share``), ``/mcp restart NAME`` and the MCP prompts as slash commands.
Nothing here imports Textual; env and header values never appear (only the command line as written)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Protocol

from paragents.agent.tokens import estimate_json_tokens
from paragents.mcp.server import McpServerError
from paragents.sessions.core import SessionsCore
from paragents.sessions.view import SessionError

COLUMNS = ("server", "state", "pid", "rss", "tools", "sessions", "tokens", "detail")
"""Columns of /mcp. A server's first row has its numbers and last error in "detail"; the rows under it
(state column: "tools", "command", "stderr") hold its tool names, command line and log tail."""


@dataclass(frozen=True)
class McpReport:
    """The rows of ``/mcp`` (see :data:`COLUMNS`) and notes shown above them."""

    rows: list[tuple[str, ...]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    """One line per server process for the overview screen."""


def _mib(kib: int | None) -> str:
    return "-" if kib is None else f"{kib / 1024:.0f} MB"


class Mcp(Protocol):
    """The project's MCP servers as clients use them (``runtime.mcp``)."""

    def mcp_report(self, sid: str | None = None) -> McpReport: ...
    async def mcp_restart(self, name: str) -> str: ...
    async def mcp_prompt(self, sid: str, command: str, text: str) -> str: ...


class McpCommands:
    """The :class:`Mcp` facet over the project's server pool (``SessionsCore.mcp_pool``)."""

    def __init__(self, core: SessionsCore) -> None:
        self.core = core

    def mcp_report(self, sid: str | None = None) -> McpReport:
        """The rows of ``/mcp``; ``sid`` (the session it was asked from) gives the token column and offers."""
        core = self.core
        pool = core.mcp_pool
        names = {s: v.name for s, v in core.sessions.items()}
        agent = core.agents.get(sid) if sid else None
        mine = agent.calls.mcp if agent is not None else None
        tokens = mine.spec_tokens(estimate_json_tokens) if mine is not None else {}
        window = core.sessions[sid].context_window if sid in core.sessions else 0
        report = McpReport(notes=list(pool.problems))
        if pool.project_file_changed():
            report.notes.append(
                "The project's .mcp.json was added or changed since paragents read it: /reload reads it "
                "(servers that did not change keep running)."
            )
        elif not pool.entries:
            report.notes.append(
                'No MCP servers: add a .mcp.json ({"mcpServers": {"NAME": {"command": ...}}}) to the project '
                'or "mcp": {"servers": {...}} to runtime_config.json (docs/mcp.md).'
            )
        for st in pool.status():
            users = ", ".join(sorted(names.get(u, u[:8]) for u in st.users)) or "-"
            cost = tokens.get(st.name, 0)
            share = f" ({cost * 100 // window}%)" if window and cost else ""
            report.rows.append(
                (
                    f"{st.name} ({st.origin}, {st.transport}, {st.scope})",
                    st.state,
                    str(st.pid) if st.pid else "-",
                    _mib(st.rss_kib),
                    str(len(st.tools)),
                    users,
                    f"{cost}{share}" if cost else "-",
                    f"last error: {st.last_error}" if st.last_error else "-",
                )
            )
            if st.tools:
                report.rows.append(("", "tools", "", "", "", "", "", ", ".join(st.tools)))
            pid = f"pid {st.pid}, {_mib(st.rss_kib)}, " if st.pid else ""
            report.summary.append(
                f"MCP {st.name}: {st.state}, {pid}{len(st.tools)} tools, used by {users}"
                + (f"; last error: {st.last_error}" if st.last_error else "")
            )
            report.rows.append(("", "command", "", "", "", "", "", st.command))
            for line in st.log_tail.splitlines()[-5:]:
                report.rows.append(("", "stderr", "", "", "", "", "", line))
            if window and cost > pool.settings.context_share * window:
                handle = next((h for (n, _o), h in pool.handles.items() if n == st.name), None)
                unused = [t for t in st.tools if handle is not None and not handle.calls.get(t)]
                if unused:
                    report.notes.append(
                        f"'{st.name}' tool schemas cost {cost} tokens, {cost * 100 // window}% of the window "
                        f"(more than mcp.context_share); to drop its unused tools add "
                        f'"disabledTools": {json.dumps(unused)} to its entry'
                    )
        return report

    async def mcp_restart(self, name: str) -> str:
        """Restart the MCP server ``name`` now (``/mcp restart NAME``); return what happened."""
        try:
            return await self.core.mcp_pool.restart(name)
        except McpServerError as exc:
            raise SessionError(str(exc)) from None

    async def mcp_prompt(self, sid: str, command: str, text: str) -> str:
        """The text of the MCP prompt ``command`` (``mcp__server__prompt``) with arguments from ``text``
        (``/mcp__server__prompt ARGS``). Raises SessionError with one readable message."""
        agent = self.core.agents.get(sid)
        mcp = agent.calls.mcp if agent is not None else None
        if mcp is None:
            raise SessionError(f"no open session with id {sid}")
        try:
            return await mcp.prompt(command, text)
        except McpServerError as exc:
            raise SessionError(str(exc)) from None


def mcp_tokens(core: SessionsCore, sid: str) -> dict[str, int]:
    """Estimated tokens the MCP tool schemas add to each of the session's requests, by server."""
    agent = core.agents.get(sid)
    mcp = agent.calls.mcp if agent is not None else None
    return mcp.spec_tokens(estimate_json_tokens) if mcp is not None else {}
