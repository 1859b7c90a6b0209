"""paragents as the ACP client of one external agent: ``session/update`` goes to the turn's
:class:`~paragents.acp.updates.TurnLog`; ``session/request_permission`` is answered by paragents'
rule engine first, else by the user (inline approval bar, inbox); ``fs/read_text_file``,
``fs/write_text_file`` and ``terminal/*`` are served by paragents' own tools, so the policy, the
conflict checker (reservations, stale reads), the lane's working directory and the audit apply.
Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shlex
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from acp import RequestError
from acp.schema import (
    AllowedOutcome,
    CreateTerminalResponse,
    DeniedOutcome,
    EnvVariable,
    KillTerminalResponse,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from paragents import events as ev
from paragents import treefiles
from paragents.acp.agent_env import unsafe_names
from paragents.acp.permission import WRITE_KINDS, MappedCall, decide_mapped, map_call, pick_option, preview_of
from paragents.agent.approval import ApprovalContext, ApprovalStore, approve
from paragents.models import ToolCall
from paragents.permissions import Decision
from paragents.tools.base import ToolResult
from paragents.tools.fsutil import resolve_path

if TYPE_CHECKING:
    from paragents.acp.controls import AgentControls
    from paragents.acp.updates import TurnLog
    from paragents.agent.calls import ToolCalls
    from paragents.agent.session import SessionReader
    from paragents.conflicts import ConflictChecker
    from paragents.permissions import Policy

FORBIDDEN = -32001
"""JSON-RPC error code of a refused file or terminal request (policy, conflict)."""


def refused(reason: str) -> RequestError:
    """The error an agent gets for a request paragents refused (its message says why)."""
    return RequestError(FORBIDDEN, reason, {"reason": reason})


@dataclass
class Terminal:
    """A command started for the agent (``terminal/create``): its task runs paragents' run_command."""

    command: str
    task: asyncio.Task[ToolResult]
    limit: int | None = None
    released: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


class AgentSide(Protocol):
    """What the client uses of its :class:`~paragents.acp.agent.AcpAgent`: the session's parts, and
    its tool calls (``calls``: summaries, previews, and the tools that serve the requests)."""

    session: SessionReader
    policy: Policy
    conflicts: ConflictChecker
    log: TurnLog
    controls: AgentControls
    calls: ToolCalls

    @property
    def store(self) -> ApprovalStore: ...
    def emit(self, event: ev.Event) -> None: ...


class AcpClient:
    """The client side of one agent connection (see the module docstring); ``agent`` owns the session."""

    def __init__(self, agent: AgentSide) -> None:
        self.agent = agent
        self.terminals: dict[str, Terminal] = {}
        self.asks: set[asyncio.Task[Any]] = set()
        """Permission asks in flight (cancelled with the turn: the agent then gets "cancelled")."""
        self.served: list[tuple[str, str]] = []
        """The file and terminal requests served, in order: ("read"|"write"|"terminal", path or command)."""
        self.approved: set[str] = set()
        """Paths and commands the user or a rule allowed through ``request_permission`` this turn: the
        file or terminal request that carries them out is not asked again (the policy still denies)."""

    # -- updates -------------------------------------------------------------------------------------
    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.agent.log.apply(update)
        self.agent.controls.apply(update)

    # -- permissions ---------------------------------------------------------------------------------
    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        task = asyncio.create_task(self._permission(tool_call, options))
        self.asks.add(task)
        try:
            option = await task
        except asyncio.CancelledError:
            if not task.cancelled():
                raise
            option = None
        finally:
            self.asks.discard(task)
        if option is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=option))

    async def _permission(self, tool_call: ToolCallUpdate, options: list[PermissionOption]) -> str | None:
        """The option id answering ``tool_call``: the policy's when a rule decides every check (deny
        wins), else the user's answer (asked once, through ``approve``). An edit the answer allows
        then goes through the conflict checker (reservations, stale reads) like our own edits."""
        agent = self.agent
        session = agent.session
        tool_call = agent.log.merged(tool_call)
        mapped = map_call(tool_call)
        chosen = decide_mapped(
            agent.policy, mapped, cwd=session.workdir, mode=session.mode, session_rules=session.session_rules
        )
        always = False
        if chosen.decision != "ask":
            await agent.store.audit.record(
                session.id,
                tool=mapped.call.name,
                input=json.loads(mapped.call.arguments),
                decision=chosen.decision,
                reason=chosen.reason,
                rule=chosen.rule,
                scope=chosen.scope,
                answered_by="policy",
                answer=chosen.decision,
            )
            if chosen.decision == "deny":
                agent.emit(
                    ev.Notice(session.id, f"denied by policy: {mapped.summary}: {chosen.reason}", "warning")
                )
                agent.log.denied.add(tool_call.tool_call_id)
                return pick_option(options, False)
        else:  # ask: through approve() (the first check names the rule family; unmapped kinds always ask)
            tool, args = mapped.checks[0] if mapped.checks else (mapped.call.name, {})
            policy = agent.policy if mapped.checks else _AskAlways(agent.policy)
            approval = await approve(
                ApprovalContext(
                    session=session,
                    policy=policy,  # type: ignore[arg-type]
                    store=agent.store,
                    emit=agent.emit,
                    call=mapped.call,
                    tool_name=tool,
                    args=args,
                    summary=mapped.summary,
                    preview=_constant(preview_of(tool_call, mapped, str(session.workdir))),
                    agent_options=tuple((str(o.kind), o.name) for o in options),
                )
            )
            if not approval.allowed:
                agent.log.denied.add(tool_call.tool_call_id)
                return pick_option(options, False)
            always = approval.answer is not None and approval.answer.kind == "allow_always"
        skip = await self._edit_conflicts(mapped)
        if skip is not None:
            agent.emit(
                ev.Notice(session.id, f"held by the conflict checker: {mapped.summary}: {skip}", "warning")
            )
            agent.log.denied.add(tool_call.tool_call_id)
            return pick_option(options, False)
        self._remember(mapped.checks)
        return pick_option(options, True, always=always)

    async def _edit_conflicts(self, mapped: MappedCall) -> str | None:
        """For an agent's edit/delete/move: the conflict checker's preflight of each path it writes,
        as for our own ``write_file`` (another session's reservation holds it; the paths are then
        reserved for this session). Returns why it may not run, or None."""
        if mapped.kind not in WRITE_KINDS:
            return None
        agent = self.agent
        for index, (_tool, args) in enumerate(mapped.checks):
            path = str(resolve_path(agent.session.workdir, str(args.get("path", ""))))
            call = ToolCall(f"{mapped.call.id}-w{index}", "write_file", json.dumps({"path": path}))
            skip = await agent.conflicts.preflight(agent.session.id, call, {"path": path})
            if skip is not None:
                return skip
        return None

    def _decide(self, tool: str, args: dict[str, Any]) -> Decision | None:
        session = self.agent.session
        try:
            return self.agent.policy.decide(
                tool, args, cwd=session.workdir, mode=session.mode, session_rules=tuple(session.session_rules)
            )
        except ValueError:
            return None

    def _remember(self, checks: tuple[tuple[str, dict[str, Any]], ...]) -> None:
        workdir = self.agent.session.workdir
        for _tool, args in checks:
            if "command" in args:
                self.approved.add(str(args["command"]))
            elif "path" in args:
                self.approved.add(str(resolve_path(workdir, str(args["path"]))))

    async def _authorize(
        self, tool: str, args: dict[str, Any], call: ToolCall, summary: str, key: str, *also: str
    ) -> bool:
        """Let a file or terminal request through the policy: a deny refuses it; an ask is answered by
        the ``request_permission`` that announced it (``key`` or one of ``also`` approved), else asks
        the user. Returns True when the user was asked (the call is shown in the transcript; a denial
        is marked there). Raises the refusal (RequestError) when it may not run, and before anything
        else when the session's directory is gone (ToolCalls.gone)."""
        agent = self.agent
        gone = agent.calls.gone()
        if gone is not None:
            raise refused(gone)
        decision = self._decide(tool, args)
        if decision is not None and decision.decision != "ask":
            audit = {"decision": decision.decision, "reason": decision.reason}
            await agent.store.audit.record(
                agent.session.id,
                tool=tool,
                input=args,
                **audit,
                rule=decision.rule,
                scope=decision.scope,
                answered_by="policy",
                answer=decision.decision,
            )
            if decision.decision == "deny":
                raise refused(f"denied by policy: {decision.reason}")
            return False
        if key in self.approved or any(k in self.approved for k in also):
            return False
        approval = await approve(
            ApprovalContext(
                session=agent.session,
                policy=agent.policy,
                store=agent.store,
                emit=agent.emit,
                call=call,
                tool_name=tool,
                args=args,
                summary=summary,
                preview=lambda: agent.calls.preview(tool, args),
            )
        )
        if not approval.allowed:
            agent.emit(ev.ToolCallFinished(agent.session.id, call, "denied", approval.why))
            raise refused(approval.why)
        return True

    async def _preflight(self, call: ToolCall, args: dict[str, Any]) -> None:
        """The conflict checker (reservations, stale reads, resources); raises the refusal when held
        calls end skipped."""
        agent = self.agent
        skip = await agent.conflicts.preflight(agent.session.id, call, args)
        if skip is not None:
            agent.emit(ev.Notice(agent.session.id, f"held by the conflict checker: {skip}", "warning"))
            raise refused(skip)

    # -- files ---------------------------------------------------------------------------------------
    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse:
        agent = self.agent
        sid = agent.session.id
        target = resolve_path(agent.session.workdir, path)
        args = {"path": str(target)}
        call = ToolCall(f"fs-{uuid.uuid4().hex[:8]}", "read_file", json.dumps(args))
        asked = await self._authorize("read_file", args, call, f"read {path}", str(target))
        try:
            data = await asyncio.to_thread(treefiles.read_bytes, target)  # never a FIFO nor through a link
        except OSError as exc:
            if asked:
                agent.emit(ev.ToolCallFinished(sid, call, "error", f"cannot read {target}: {exc}"))
            raise RequestError.resource_not_found(str(target)) from exc
        if asked:  # its entry (shown by the ask) is done
            agent.emit(ev.ToolCallFinished(sid, call, "ok", f"read {len(data):,} bytes"))
        digest = hashlib.sha256(data).hexdigest()
        seen = agent.conflicts.reads.seen(sid, str(target))
        if seen is not None and seen.digest != digest:
            how = "wrote" if seen.how == "write" else "read"
            agent.emit(
                ev.Notice(
                    sid,
                    f"{target} changed since this session last {how} it through paragents (written by "
                    "the agent itself, outside paragents' file requests, or by another program)",
                    "warning",
                )
            )
        agent.conflicts.on_read(sid, target, digest)
        self.served.append(("read", str(target)))
        text = data.decode("utf-8", errors="replace")
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)
            text = "".join(lines[start : start + limit] if limit is not None else lines[start:])
        return ReadTextFileResponse(content=text)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse | None:
        agent = self.agent
        target = resolve_path(agent.session.workdir, path)
        args = {"path": str(target), "content": content}
        call = ToolCall(f"fs-{uuid.uuid4().hex[:8]}", "write_file", json.dumps(args))
        summary = agent.calls.summarize("write_file", args)
        await self._authorize("write_file", args, call, summary, str(target))
        sid = agent.session.id
        # shown as paragents' own write: held by a conflict, it shows the diff it would have made
        agent.emit(ev.ToolCallStarted(sid, call, f"{summary} · through paragents"))
        try:
            await self._preflight(call, args)
        except RequestError as exc:
            shown = await agent.calls.preview("write_file", args)
            diff = shown.text if shown is not None and shown.kind == "diff" else None
            agent.emit(ev.ToolCallFinished(sid, call, "skipped", str(exc), diff))
            raise
        except asyncio.CancelledError:
            agent.emit(ev.ToolCallFinished(sid, call, "cancelled", "cancelled"))
            raise
        result = await agent.calls.serve("write_file", args)
        agent.emit(
            ev.ToolCallFinished(sid, call, "error" if result.is_error else "ok", result.content, result.diff)
        )
        if result.is_error:
            raise refused(result.content)
        self.served.append(("write", str(target)))
        return WriteTextFileResponse()

    # -- terminals -----------------------------------------------------------------------------------
    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        agent = self.agent
        line = shlex.join([command, *args]) if args else command
        extra = {e.name: e.value for e in env or ()}
        unsafe = unsafe_names(extra)
        if unsafe:  # they change what the command runs, which the policy judged from its line alone
            raise refused(
                f"terminal/create: the agent's env sets {', '.join(unsafe)}, which paragents does not "
                "pass to commands: only locale, time zone, colour, terminal-size and CI variables are "
                "(any other one may change what a command runs: its config, start-up files, programs "
                "or libraries); run the command without them"
            )
        call_args: dict[str, Any] = {"command": line}
        if cwd:  # checked by the policy like run_command's: inside the session's working directories
            call_args["cwd"] = cwd
        call = ToolCall(f"term-{uuid.uuid4().hex[:8]}", "run_command", json.dumps(call_args))
        body = shell_body(command, args or [])  # "bash -c X": X is what request_permission approved
        keys = [line, *([body] if body else [])]
        if cwd and os.path.realpath(cwd) != os.path.realpath(agent.session.workdir):
            keys = [f"{key}\x00in {cwd}" for key in keys]  # approved where it was announced, not there
        asked = await self._authorize("run_command", call_args, call, line, *keys)
        await self._preflight(call, call_args)
        # the session's working directory (its lane's) stays the writable root: the agent's cwd is
        # only where the command starts
        task = asyncio.create_task(agent.calls.serve("run_command", call_args, env=extra))
        if asked:  # its entry (shown by the ask) follows the command
            sid = agent.session.id
            agent.emit(ev.ToolCallStarted(sid, call, f"{line} · through paragents"))
            task.add_done_callback(lambda t: agent.emit(ev.ToolCallFinished(sid, call, *_ended(t))))
        terminal_id = f"term-{uuid.uuid4().hex[:12]}"
        self.served.append(("terminal", line))
        self.terminals[terminal_id] = Terminal(line, task, output_byte_limit)
        return CreateTerminalResponse(terminal_id=terminal_id)

    def _terminal(self, terminal_id: str) -> Terminal:
        terminal = self.terminals.get(terminal_id)
        if terminal is None:
            raise RequestError.invalid_params({"terminalId": f"no terminal {terminal_id}"})
        return terminal

    @staticmethod
    def _status(terminal: Terminal) -> TerminalExitStatus | None:
        if not terminal.task.done():
            return None
        if terminal.task.cancelled():
            return TerminalExitStatus(exit_code=None, signal="SIGKILL")
        code = terminal.task.result().meta.get("exit_code")
        return TerminalExitStatus(exit_code=code if isinstance(code, int) else None)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        terminal = self._terminal(terminal_id)
        output = ""
        if terminal.task.done() and not terminal.task.cancelled():
            output = terminal.task.result().content
        truncated = False
        if terminal.limit is not None and len(output.encode()) > terminal.limit:
            output = output.encode()[-terminal.limit :].decode("utf-8", errors="ignore")
            truncated = True
        return TerminalOutputResponse(output=output, truncated=truncated, exit_status=self._status(terminal))

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        terminal = self._terminal(terminal_id)
        await asyncio.wait({terminal.task})
        status = self._status(terminal)
        assert status is not None
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> KillTerminalResponse | None:
        self._terminal(terminal_id).task.cancel()
        return KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> ReleaseTerminalResponse | None:
        terminal = self.terminals.pop(terminal_id, None)
        if terminal is not None:
            terminal.task.cancel()
        return ReleaseTerminalResponse()

    # -- the rest --------------------------------------------------------------------------------------
    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        raise RequestError.method_not_found("elicitation/create")

    async def complete_elicitation(self, elicitation_id: str, **kwargs: Any) -> None:
        return None

    def on_connect(self, conn: Any) -> None:
        return None

    def cancel_all(self) -> None:
        """The turn was cancelled: answer pending permission asks "cancelled", kill its terminals."""
        for task in list(self.asks):
            task.cancel()
        for terminal in self.terminals.values():
            terminal.task.cancel()
        self.approved.clear()


class _AskAlways:
    """A policy stand-in for calls paragents cannot map onto a rule family: it always asks."""

    def __init__(self, policy: Any) -> None:
        self._policy = policy

    def decide(self, tool: str, arguments: dict[str, Any], **kwargs: Any) -> Decision:
        return Decision("ask", f"{tool}: an agent tool paragents has no rule family for")

    def remember_always(self, rules: list[str]) -> None:
        self._policy.remember_always(rules)


SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})


def shell_body(command: str, args: list[str]) -> str | None:
    """The script of ``sh -c SCRIPT`` (any of :data:`SHELLS`, by name or path; ``-lc`` too): agents
    run the command a ``request_permission`` announced that way. None for anything else."""
    if Path(command).name not in SHELLS or len(args) < 2:
        return None
    flag = args[0]
    if flag.startswith("-") and not flag.startswith("--") and "c" in flag[1:]:
        return args[1]
    return None


def _ended(task: asyncio.Task[ToolResult]) -> tuple[Literal["ok", "error", "cancelled"], str]:
    """How a terminal's command ended, for its transcript entry."""
    if task.cancelled():
        return "cancelled", "killed"
    if task.exception() is not None:
        return "error", str(task.exception())
    result = task.result()
    return ("error" if result.is_error else "ok"), result.content


def _constant(value: Any) -> Any:
    async def get() -> Any:
        return value

    return get
