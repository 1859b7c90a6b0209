"""One tool call of a session (:class:`ToolCalls`), held by paragents' own agent and by an external
ACP agent alike: finding the tool (built-in or MCP), parsing and validating its arguments, asking
approval (:func:`~paragents.agent.approval.approve`), the conflict checker's preflight, the
command's sandbox, the preview shown with an ask, running it and saying how it ended (events). Also
what surrounds calls: the tool specs of a request, the MCP servers prepared before it, the MCP
resources a prompt names, and the working tree's fingerprint the loop guard compares. For an external
agent it serves the file and terminal requests with the same tools (:meth:`ToolCalls.serve`).

Tool errors, denials and bad arguments are results (the model is told); only cancellation and the
store's failures raise. Nothing here imports Textual."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from paragents import events as ev
from paragents.agent.approval import ApprovalContext, ApprovalStore, approve, ask_server_start, read_filter
from paragents.agent.session import SessionReader
from paragents.agent.tree_state import fingerprint
from paragents.lanes import gone_dir
from paragents.models import CallPreview, ToolCall, parse_arguments
from paragents.tools.base import ToolContext, ToolResult
from paragents.tools.output import cap_middle
from paragents.tools.registry import unknown_tool_message
from paragents.tools.sandbox import SandboxConfig, SandboxStatus, check, denied_out_of_sight

if TYPE_CHECKING:
    from paragents.config import RuntimeConfig
    from paragents.mcp import SessionMcp
    from paragents.permissions import Policy
    from paragents.store.records import ApprovalRecord
    from paragents.tools.execution import Execution
    from paragents.tools.registry import ToolRegistry

COMMAND_TOOLS = frozenset({"run_command"})
"""Tools after which the loop guard compares the working tree's fingerprint (a command may write)."""

Preflight = Callable[[str, ToolCall, dict[str, Any]], Awaitable[str | None]]
"""Optional hook run before a tool call that passed permissions: returns None to go on, or a
readable reason to skip the call (the conflict checker plugs in here)."""


def capped(text: str, limit: int = 1000) -> str:
    """Return an error detail cut to about ``limit`` characters (head and tail kept), so a huge
    argument quoted in an error (a 1 MB path or name from the model) never floods the history."""
    return cap_middle(text, limit)


class ToolCalls:
    """The tool calls of one session (see the module docstring). ``tools`` and ``config`` may be
    replaced (a fan-out worker's tools, a config reload); ``store`` holds the asks' rows, the audit
    and the session's rules (:class:`~paragents.agent.approval.ApprovalStore`); ``mcp`` is None
    without MCP, ``preflight`` None without a conflict checker, ``on_read``/``on_write`` the
    stale-read hooks."""

    def __init__(
        self,
        *,
        session: SessionReader,
        tools: ToolRegistry,
        policy: Policy,
        store: ApprovalStore,
        config: RuntimeConfig,
        emit: ev.EventSink,
        preflight: Preflight | None = None,
        on_read: Callable[[Path, str], None] | None = None,
        on_write: Callable[[Path, str], None] | None = None,
        mcp: SessionMcp | None = None,
        execution: Callable[[], Execution | None] | None = None,
    ) -> None:
        self.session = session
        self.tools = tools
        self.policy = policy
        self.store = store
        self.config = config
        self.emit = emit
        self.preflight = preflight
        self.on_read = on_read
        """Called with (resolved path, sha256 hex) after each successful read_file (stale-read checks)."""
        self.on_write = on_write
        """Called with (resolved path, sha256 hex) after each successful write_file/edit_file."""
        self.mcp = mcp
        """This session's MCP tools from the shared pool (None: no MCP), prepared before each request."""
        self.execution = execution
        """Where this session's tool calls run when not on this machine (its lane's container or Pod:
        paragents.tools.execution), looked up per call; None (or returning None): here."""
        self.sandbox_warned = False
        """True once the "sandbox unavailable, running unconfined" warning was shown in this session."""

    def remote(self) -> Execution | None:
        """Where the calls run now when not here (a lane's container or Pod), else None."""
        return self.execution() if self.execution is not None else None

    def gone(self) -> str | None:
        """The refusal of every tool call while this session's directory is gone (removed while the
        session was open: a lane discarded elsewhere, ``rm -rf``), else None. One stat per call, made
        before anything runs, so no tool makes the removed path again as a plain folder and no command
        fails obscurely (bwrap cannot start in a missing directory). Not checked when the calls run
        in a lane's container or Pod (its files are there)."""
        if self.remote() is not None:
            return None
        gone = gone_dir(Path(self.session.workdir))
        if gone is None:
            return None
        return (
            f"error: nothing was run: {gone}; it was removed while the session {self.session.name!r} was"
            " open, and no tool of this session can work any more: close this session (/close) and start"
            " a new one"
        )

    # -- around the calls ------------------------------------------------------------------------------
    def tool(self, name: str) -> Any:
        """The built-in or MCP tool called ``name``, or None."""
        tool = self.tools.get(name)
        if tool is None and self.mcp is not None:
            return self.mcp.get(name)
        return tool

    def specs(self) -> list[dict[str, Any]]:
        """Return the tool specs sent with each request ([] when the model is set to chat without tools):
        the built-in tools, then the session's MCP tools."""
        if not self.config.model_settings(self.session.model).tools:
            return []
        return self.tools.specs() + (self.mcp.specs() if self.mcp is not None else [])

    async def prepare_mcp(self, turn_id: int | None) -> None:
        """Start (or find) the MCP servers this session uses and refresh its MCP tools; a project
        server not trusted yet asks first (in turn ``turn_id``); each new problem is shown once as a
        Notice."""
        mcp = self.mcp
        if mcp is None or not self.config.model_settings(self.session.model).tools:
            return

        async def ask(entry: Any) -> Any:
            answer = await ask_server_start(
                self.session,
                self.policy,
                self.store,
                self.emit,
                entry.name,
                entry.command_line(),
                str(mcp.pool.project_dir),
                turn_id,
            )
            return {"allow_always": "always", "allow_once": "once", "allow_session": "once"}.get(
                answer, "refuse"
            )

        for problem in await mcp.prepare(ask):
            self.emit(ev.Notice(self.session.id, problem, "warning"))

    async def attach_resources(self, prompt: str) -> str:
        """The prompt with the MCP resources it names as ``@server:uri`` appended (docs/mcp.md)."""
        if self.mcp is None or "@" not in prompt:
            return prompt
        text, problems = await self.mcp.attach(prompt, self.config.max_output_chars)
        for problem in problems:
            self.emit(ev.Notice(self.session.id, problem, "warning"))
        return text

    async def tree_state(self, call: ToolCall, idle_guard: bool, *, after: bool = False) -> Any:
        """For a ``run_command`` call while the loop guard's idle check is on (``idle_guard``): the
        working tree's fingerprint (agent/tree_state.py) before the call as ``(fingerprint,)``, or after
        it as the bare fingerprint; None when not needed (another tool, the guard off)."""
        if call.name not in COMMAND_TOOLS or not idle_guard:
            return None
        if self.remote() is not None:  # its files are elsewhere: a command counts as a change
            return None if after else (None,)

        state = await asyncio.to_thread(fingerprint, Path(self.session.workdir))
        return state if after else (state,)

    # -- one call of the model -------------------------------------------------------------------------
    async def run(
        self,
        call: ToolCall,
        finish_reason: str | None,
        turn_id: int | None,
        resume: ApprovalRecord | None = None,
    ) -> tuple[str, str]:
        """Check, ask, run one tool call of turn ``turn_id``; return the text of its tool message and
        its outcome (ok, error, denied or skipped). Never raises but CancelledError (and StoreError).
        ``resume``: the approval a crashed process left pending for this call (asked again)."""
        sid = self.session.id
        tool = self.tool(call.name)
        if tool is None:
            msg = unknown_tool_message(call.name)
            if self.mcp is not None and self.mcp.tools:
                msg += ", " + ", ".join(self.mcp.tools)
            self.emit(ev.ToolCallFinished(sid, call, "error", msg))
            return msg, "error"
        gone = self.gone()
        if gone is not None:
            self.emit(ev.ToolCallFinished(sid, call, "error", gone))
            return gone, "error"
        try:
            args = parse_arguments(call.arguments)
        except ValueError as exc:
            msg = f"error: {capped(str(exc))}; the call was not run"
            if finish_reason == "length":
                msg += " (the reply was truncated: finish_reason=length); send the call again, complete"
            self.emit(ev.ToolCallFinished(sid, call, "error", msg))
            return msg, "error"
        try:
            args = tool.validate(args)
        except ValueError as exc:
            msg = f"error: bad arguments for {call.name}: {capped(str(exc))}"
            self.emit(ev.ToolCallFinished(sid, call, "error", msg))
            return msg, "error"
        summary = tool.summarize(args)
        sandbox, status = self.sandbox_for(tool.family)
        if status is not None and status.state == "refused":
            self.emit(ev.ToolCallFinished(sid, call, "error", status.message, sandboxed=False))
            return status.message, "error"
        sandboxed = None if status is None else status.active
        approval = await approve(
            ApprovalContext(
                session=self.session,
                policy=self.policy,
                store=self.store,
                emit=self.emit,
                call=call,
                tool_name=tool.name,
                args=args,
                summary=summary,
                sandbox=sandbox,
                sandboxed=sandboxed,
                preview=lambda: self.preview(tool.name, args),
                turn_id=turn_id,
                resume=resume,
                read_only=bool(getattr(tool, "read_only", False)),
                schema=tool.parameters if tool.name.startswith("mcp__") else None,
                masked=self.masked(sandbox, status),
            )
        )
        if not approval.allowed:
            self.emit(ev.ToolCallFinished(sid, call, "denied", approval.why))
            return approval.why, "denied"
        if self.preflight is not None and not getattr(tool, "read_only", False):
            skip = await self.preflight(sid, call, args)
            if skip is not None:
                self.emit(ev.ToolCallFinished(sid, call, "skipped", skip))
                return skip, "skipped"
        self.emit(ev.ToolCallStarted(sid, call, summary, sandboxed))
        ctx = ToolContext(
            workdir=self.session.workdir,
            session_id=sid,
            command_timeout=self.config.command_timeout,
            max_output_chars=self.config.max_output_chars,
            on_read=self.on_read,
            on_write=self.on_write,
            sandbox=sandbox,
            env=dict(getattr(self.session, "lane_env", None) or {}),
            read_check=read_filter(self.policy, self.session),  # grep/glob/list_dir: Read rules per path
            execution=self.remote(),
        )
        try:
            result = await tool.run(args, ctx)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a tool bug must not kill the loop
            msg = f"error: {call.name} failed unexpectedly: {capped(f'{type(exc).__name__}: {exc}')}"
            self.emit(ev.ToolCallFinished(sid, call, "error", msg))
            return msg, "error"
        outcome: Literal["ok", "error"] = "error" if result.is_error else "ok"
        ran_sandboxed = result.meta.get("sandboxed") if sandbox is not None else None
        self.emit(ev.ToolCallFinished(sid, call, outcome, result.content, result.diff, ran_sandboxed))
        for notice in result.meta.get("sandbox_notices", ()):  # what paragents moved: not only in the result
            self.emit(ev.Notice(sid, f"{summary}: {notice}", "warning"))
        return result.content, outcome

    # -- an external agent's requests ------------------------------------------------------------------
    def summarize(self, tool_name: str, args: dict[str, Any]) -> str:
        """The one-line description of a call of paragents' tool ``tool_name``."""
        tool = self.tools.get(tool_name)
        return tool.summarize(args) if tool is not None else tool_name

    async def serve(
        self,
        tool_name: str,
        args: dict[str, Any],
        *,
        workdir: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> ToolResult:
        """Run paragents' tool ``tool_name`` for an external agent's request, already allowed (the
        stale-read hooks apply, a command runs in the sandbox); ``workdir`` where it starts (default
        the session's), ``env`` what the agent adds to the lane's environment."""
        tool = self.tools.get(tool_name)
        assert tool is not None, tool_name
        gone = self.gone()
        if gone is not None:
            return ToolResult(gone, is_error=True)
        sandbox, _status = self.sandbox_for(tool.family)
        ctx = ToolContext(
            workdir=workdir or self.session.workdir,
            session_id=self.session.id,
            command_timeout=self.config.command_timeout,
            max_output_chars=self.config.max_output_chars,
            on_read=self.on_read,
            on_write=self.on_write,
            sandbox=sandbox,
            env={**dict(getattr(self.session, "lane_env", None) or {}), **(env or {})},
            read_check=read_filter(self.policy, self.session),
        )
        return await tool.run(args, ctx)

    # -- sandbox and preview ---------------------------------------------------------------------------
    def sandbox_config(self) -> SandboxConfig:
        """Return how this session's commands are confined: the config's ``sandbox`` settings with the
        session's ``/sandbox`` mode (``session.sandbox_mode``), its writable root
        (``session.sandbox_root``, e.g. a lane's worktree; else the working directory) and the paths
        of the Read deny rules to hide."""
        settings = self.config.sandbox
        return SandboxConfig(
            mode=getattr(self.session, "sandbox_mode", None) or settings.mode,
            network=settings.network,
            writable=settings.writable,
            hidden_rules=self.policy.read_deny_patterns(self.session.workdir),
            root=getattr(self.session, "sandbox_root", None),
            auto_allow=settings.auto_allow,
            bwrap=settings.bwrap,
            hidden=settings.hidden,
            env_allow=settings.env_allow,
            session=self.session.id,
            home_visible=settings.home_visible,
            visible=tuple(str(d) for d in self.policy.additional_dirs),
        )

    def sandbox_for(self, family: str) -> tuple[SandboxConfig | None, SandboxStatus | None]:
        """For a command (``bash`` family): the sandbox and its status, warning once per session when
        it runs unconfined in mode "auto"; (None, None) for other tools."""
        if family != "bash":
            return None, None
        sandbox = self.sandbox_config()
        remote = self.remote()
        if remote is not None:  # the lane's container/Pod is the sandbox: bubblewrap is not used there
            return sandbox, SandboxStatus(
                "on" if remote.confined else "off", f"commands run in {remote.where}"
            )
        status = check(sandbox)
        if status.state == "unconfined" and not self.sandbox_warned:
            self.sandbox_warned = True
            self.emit(ev.Notice(self.session.id, status.message, "warning"))
        return sandbox, status

    def masked(
        self, sandbox: SandboxConfig | None, status: SandboxStatus | None
    ) -> Callable[[], list[str]] | None:
        """What a command's bubblewrap sandbox hides by Read deny rules (computed when asked), or None
        when it runs in none (unconfined, or in a lane's container, which hides nothing)."""
        if sandbox is None or status is None or not status.active or status.bwrap is None:
            return None
        return partial(denied_out_of_sight, sandbox, Path(self.session.workdir))

    async def preview(self, tool_name: str, args: dict[str, Any]) -> CallPreview | None:
        """Return the tool's preview of the call (what it will do), computed in a thread; a preview
        that fails becomes a note (the ask is still shown)."""
        tool = self.tool(tool_name)
        if tool is None:
            return None
        remote = self.remote()
        try:
            if remote is not None:  # from the lane's own files, never from the worktree here
                ctx = ToolContext(workdir=self.session.workdir, execution=remote)
                shown: CallPreview | None = await remote.preview_tool(tool, args, ctx)
                return shown
            return await asyncio.to_thread(tool.preview, args, self.session.workdir)
        except Exception as exc:
            return CallPreview("note", problem=f"no preview: {capped(f'{type(exc).__name__}: {exc}', 200)}")
