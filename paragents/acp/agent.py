"""An external ACP agent as a paragents session's agent (:class:`AcpAgent`): the same turn contract
as paragents' own :class:`~paragents.agent.Agent` (store, events, cancel), but each turn is a
``session/prompt`` to an agent subprocess started on demand (its own process group; ``initialize``
time-boxed; ``session/load`` of the stored agent session when the agent supports it, else
``session/new``). Its stderr and exit code are shown when it fails to start or crashes; the next
prompt starts it again. Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import PROTOCOL_VERSION, RequestError, connect_to_agent, text_block
from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation, PromptResponse

from paragents import events as ev
from paragents.acp.client import AcpClient
from paragents.acp.controls import AgentControls
from paragents.acp.held import WAITING_ON, held_note
from paragents.acp.launch import AgentSpec, AgentUnavailable, find_program
from paragents.acp.process import AgentProcess
from paragents.acp.spending import AgentSpending
from paragents.acp.updates import TurnLog
from paragents.agent import Agent
from paragents.agent.approval import read_filter
from paragents.agent.budget import Breach
from paragents.agent.compaction import CompactionOutcome
from paragents.agent.loop import BUDGET_KIND
from paragents.agent.spend import request_cost
from paragents.agent.tokens import estimate_text_tokens
from paragents.limits import Spend
from paragents.models import CallPreview, Message, SessionState, TurnResult, TurnStatus, Usage, user_message
from paragents.scheduler import PromptHeld
from paragents.tools.base import ToolContext, ToolResult

if TYPE_CHECKING:
    from paragents.conflicts import ConflictChecker
    from paragents.store import ApprovalRecord

CANCEL_WAIT = 5.0
"""Seconds to wait for the agent's answer to ``session/cancel`` before the turn ends anyway."""
AGENT_KIND = "agent"
"""``error_kind`` of a turn that failed because of the external agent (launch, crash, refusal)."""
CANCELLED_RESULT = "cancelled: the user cancelled the turn before this call finished"
STOP_REASONS = {
    "max_tokens": "the agent reached its token limit",
    "max_turn_requests": "the agent reached its limit of model requests for one turn",
    "refusal": "the agent refused to go on",
}


class AcpLaunchError(Exception):
    """The agent could not be started or did not open its session; ``str()`` carries its stderr."""


class AcpAgent(Agent):
    """Runs the turns of one session through an external ACP agent (see the module docstring).

    ``spec`` says how to launch it; ``remote_id`` is the agent's own session id from a previous run
    (reloaded with ``session/load`` when supported); ``save_remote`` stores a new one."""

    RESUMES_ASKS = False
    """The external agent's own turn ended with the process: its ask is not asked again."""
    STORES_AFTER_CALLS = True
    """A turn's messages are stored when it ends, after its tool calls were shown (sessions/tool_rows.py)."""

    def __init__(
        self,
        *,
        spec: AgentSpec,
        conflicts: ConflictChecker,
        remote_id: str | None = None,
        save_remote: Callable[[str], Awaitable[None]] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.spec = spec
        self.conflicts = conflicts
        self.remote_id = remote_id
        self.save_remote = save_remote
        self.log = TurnLog(self.session.id, self.emit)
        self.controls = AgentControls(self.session.id, self.emit, spec.name)
        """Its commands, modes and config options (``/mode``, ``/model``: paragents.acp.controls)."""
        self.acp = AcpClient(self)
        self.proc: AgentProcess | None = None
        self.conn: Any = None
        self.init_timeout = spec.init_timeout
        self.load_supported: bool | None = None
        """Whether the running agent supports ``session/load`` (None before it started)."""
        self.agent_info: str | None = None
        self._exit: asyncio.Task[int] | None = None
        self._start_lock = asyncio.Lock()
        self.resume_supported: bool | None = None
        """Whether the running agent supports ``session/resume`` (None before it started)."""
        self.restored = remote_id is not None
        """The agent session id came from the store (a restart or a reopen), not from this process."""
        self.stale: str | None = None
        """Set when the agent cannot continue the stored conversation (no ``session/load`` nor
        ``session/resume``): prompts wait until :meth:`start_new_session` (see ``ev.AgentSessionStale``)."""
        self.auto_new = False
        """Headless (``paragents run``): start a new agent session with a note instead of waiting."""
        self.probe: asyncio.Task[None] | None = None
        """The launch started when the session was reopened (it learns whether the agent can reload)."""
        self._fresh = asyncio.Event()
        self.spending = AgentSpending(self)
        self.log.on_usage = self.spending.reported
        if self.budget is not None:
            self.budget.agent_cost = True

    # -- the subprocess ------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        """True while the agent process runs with an open session."""
        return self.proc is not None and self.proc.returncode is None and self.conn is not None

    async def start(self) -> None:
        """Start the agent and open its session unless it runs. Raises AcpLaunchError."""
        async with self._start_lock:
            if not self.running:
                await self._launch()

    def _crash_text(self, proc: AgentProcess, what: str, code: int | None) -> str:
        stderr = proc.stderr_text().strip()
        tail = f"\nstderr:\n{stderr}" if stderr else "\n(nothing on stderr)"
        return f"agent {self.spec.name!r} {what} (exit code {code}){tail}"

    async def _race(
        self, proc: AgentProcess, exit_task: asyncio.Task[int], coro: Awaitable[Any], what: str
    ) -> Any:
        """Await ``coro`` unless the agent exits or ``init_timeout`` passes first (AcpLaunchError)."""
        task = asyncio.ensure_future(coro)
        done, _ = await asyncio.wait(
            {task, exit_task}, timeout=self.init_timeout, return_when="FIRST_COMPLETED"
        )
        if task in done:
            try:
                return task.result()
            except RequestError as exc:
                raise AcpLaunchError(
                    f"agent {self.spec.name!r}: {what} failed: {exc} {exc.data or ''}"
                ) from None
            except (ConnectionError, OSError):  # its stdout closed: it is exiting
                done, _ = await asyncio.wait({exit_task}, timeout=CANCEL_WAIT)
        task.cancel()
        if exit_task in done:
            raise AcpLaunchError(self._crash_text(proc, f"exited during {what}", exit_task.result()))
        stderr = proc.stderr_text().strip()
        raise AcpLaunchError(
            f"agent {self.spec.name!r} did not answer {what} within {self.init_timeout:.0f} s"
            + (f"\nstderr:\n{stderr}" if stderr else "")
        )

    async def _launch(self) -> None:
        spec, sid = self.spec, self.session.id
        try:
            program = find_program(spec)
        except AgentUnavailable as exc:
            raise AcpLaunchError(str(exc)) from None
        cwd = Path(spec.cwd).expanduser() if spec.cwd else self.session.workdir
        env = {**dict(getattr(self.session, "lane_env", None) or {}), **spec.env}
        try:
            proc = await AgentProcess.start([program, *spec.args], cwd=cwd, env=env)
        except OSError as exc:
            raise AcpLaunchError(f"agent {spec.name!r} could not be started: {exc}") from None
        assert proc.process.stdin is not None and proc.process.stdout is not None
        self.acp = AcpClient(self)
        conn = connect_to_agent(self.acp, proc.process.stdin, proc.process.stdout)
        exit_task = asyncio.create_task(proc.exited())
        try:
            caps = ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
            )
            info = Implementation(name="paragents", title="paragents", version=_version())
            init = await self._race(
                proc,
                exit_task,
                conn.initialize(
                    protocol_version=PROTOCOL_VERSION, client_capabilities=caps, client_info=info
                ),
                "initialize",
            )
            self.agent_info = init.agent_info.name if init.agent_info else spec.name
            self.load_supported = bool(init.agent_capabilities and init.agent_capabilities.load_session)
            session_caps = init.agent_capabilities.session_capabilities if init.agent_capabilities else None
            self.resume_supported = bool(session_caps is not None and session_caps.resume is not None)
            opened: Any = None
            resumed = False
            if self.remote_id and not self.load_supported and self.resume_supported:
                try:
                    opened = await self._race(
                        proc,
                        exit_task,
                        conn.resume_session(cwd=str(cwd), session_id=self.remote_id, mcp_servers=[]),
                        "session/resume",
                    )
                except AcpLaunchError as exc:
                    if exit_task.done():
                        raise
                    self.emit(ev.Notice(sid, str(exc), "warning"))  # refused: as if it could not resume
                else:
                    resumed = True
                    self.emit(ev.Notice(sid, f"{self.agent_info}: its session was resumed (session/resume)"))
            if resumed:
                pass
            elif self.remote_id and self.restored and not self.load_supported and not self.auto_new:
                self._go_stale()  # the process runs, with no session until the user starts one
            elif self.remote_id and self.load_supported:
                self.log.muted = True  # the agent replays the conversation paragents already shows
                try:
                    opened = await self._race(
                        proc,
                        exit_task,
                        conn.load_session(cwd=str(cwd), session_id=self.remote_id, mcp_servers=[]),
                        "session/load",
                    )
                finally:
                    self.log.muted = False
                self.emit(ev.Notice(sid, f"{self.agent_info}: its session was reloaded (session/load)"))
            else:
                if self.remote_id:
                    self.emit(
                        ev.Notice(
                            sid,
                            f"{self.agent_info} cannot reload its session (no session/load): the transcript "
                            "above is paragents' record; a new agent session starts now (the agent does "
                            "not know the conversation above)",
                            "warning",
                        )
                    )
                opened = await self._race(
                    proc, exit_task, conn.new_session(cwd=str(cwd), mcp_servers=[]), "session/new"
                )
                await self._opened_new(opened.session_id)
            if opened is not None:
                self.controls.opened(opened, self.agent_info)
            modes = getattr(opened, "modes", None)
            if modes is not None and modes.available_modes:
                self.log.mode = modes.current_mode_id
                names = ", ".join(m.id for m in modes.available_modes)
                self.emit(ev.Notice(sid, f"agent modes: {names} (now {modes.current_mode_id})"))
        except BaseException:
            with contextlib.suppress(Exception):
                await conn.close()
            await proc.stop()
            exit_task.cancel()
            raise
        self.proc, self.conn, self._exit = proc, conn, exit_task
        exit_task.add_done_callback(lambda task, proc=proc: self._exited(proc, task))  # type: ignore[misc]

    # -- a reopened session the agent cannot continue --------------------------------------------------
    def _go_stale(self) -> None:
        """The agent cannot reload the stored conversation: say so; prompts wait for a new session."""
        name = self.agent_info or self.spec.name
        self.stale = (
            f"{name} cannot continue this conversation (it supports neither session/load nor "
            "session/resume): the transcript above is read-only for it. To go on, start a new agent "
            'session ("Start a new agent session" above the prompt, or /agent new); the agent will not '
            "know what is above."
        )
        self._fresh.clear()
        self.emit(ev.AgentSessionStale(self.session.id, self.stale))

    async def _opened_new(self, remote_id: str) -> None:
        """A new agent session ``remote_id`` was opened: remember it; its cost counts from zero."""
        self.remote_id, self.restored = remote_id, False
        self.spending.new_session()
        if self.save_remote is not None:
            await self.save_remote(remote_id)
            await self.store.set_reported_cost(self.session.id, None)

    async def start_new_session(self) -> None:
        """Start a new agent session in this session (``/agent new``, the panel's bar): the stored
        transcript stays, a note marks where the new agent session begins, and a prompt waiting for it
        is sent. Raises AcpLaunchError when the agent cannot be started or refuses."""
        sid = self.session.id
        async with self._start_lock:
            old, self.remote_id = self.remote_id, None
            try:
                if self.running:
                    assert self.proc is not None and self._exit is not None
                    cwd = Path(self.spec.cwd).expanduser() if self.spec.cwd else self.session.workdir
                    opened = await self._race(
                        self.proc,
                        self._exit,
                        self.conn.new_session(cwd=str(cwd), mcp_servers=[]),
                        "session/new",
                    )
                    await self._opened_new(opened.session_id)
                    self.controls.opened(opened, self.agent_info or self.spec.name)
                else:
                    await self._launch()
            except BaseException:
                if self.remote_id is None:
                    self.remote_id = old
                raise
        was_stale, self.stale = self.stale, None
        if was_stale:
            self.emit(ev.AgentSessionStale(sid, None))
        name = self.agent_info or self.spec.name
        self.emit(
            ev.Notice(
                sid,
                f"--- a new {name} session began here: the agent does not know the conversation above ---",
                "warning",
            )
        )
        self._fresh.set()

    async def before_turn(self, prompt: str) -> None:
        """Before a queued prompt starts (and before notes from other sessions join it): held in its
        queue while the agent cannot continue the stored conversation (see ``_await_agent_session``)."""
        await self._await_agent_session(prompt)

    async def _await_agent_session(self, prompt: str, *, started: bool = False) -> None:
        """Before a turn: when the agent cannot continue the stored conversation, the prompt waits
        until the user starts a new agent session (headless, ``auto_new``: start one now, with a
        note). Before the turn started (``started`` False) it goes back to its queue (PromptHeld:
        visible, editable, kept across a quit); a turn that found out only when it launched the agent
        waits in place, and a cancel meanwhile says the prompt was not sent."""
        if self.probe is not None and not self.probe.done():
            await asyncio.shield(self.probe)  # the reopen's launch says whether the agent can reload
        if self.stale is None:
            return
        sid = self.session.id
        if self.auto_new:
            with contextlib.suppress(AcpLaunchError):  # the turn's own start says why it failed
                await self.start_new_session()
            return
        self.emit(ev.Notice(sid, held_note(prompt, queued=not started), "warning"))
        if not started:
            raise PromptHeld(prompt)
        self.emit(ev.SessionStateChanged(sid, SessionState.WAITING, "", WAITING_ON))
        try:
            await self._fresh.wait()
        except asyncio.CancelledError:
            self.emit(
                ev.Notice(sid, f"cancelled: this prompt was not sent to the agent: {prompt}", "warning")
            )
            self._set_state(SessionState.IDLE)
            raise
        self._set_state(SessionState.RUNNING)

    # -- budgets ---------------------------------------------------------------------------------------
    async def _hold_at_budget(self, prompt: str) -> Breach | None:
        """Before the prompt is sent: while a budget cap is reached, pause (the same bar and answers as
        paragents' own agent). Return the breach when the user chose to stop, else None."""
        meter = self.budget
        if meter is None:
            return None
        await self.spending.settle()  # what the agent reported since its last turn
        while meter.active():
            breach = await meter.check(self.session.model, estimate_text_tokens(prompt))
            if breach is None:
                return None
            answer = await self._pause(breach)
            if answer == "stop":
                return breach
            if answer == "one_more":
                return None
        return None

    async def _stop_at_cap(
        self, breach: Breach, prompt_task: asyncio.Future[PromptResponse], added: list[Message], total: Usage
    ) -> TurnResult:
        """The agent's reported spend crossed a cap during the turn: ``session/cancel``, keep what it did,
        end the turn (``error_kind`` "budget") saying which cap."""
        self.acp.cancel_all()
        if self.conn is not None and self.remote_id:
            with contextlib.suppress(Exception):
                await self.conn.cancel(session_id=self.remote_id)
        response: PromptResponse | None = None
        try:
            response = await asyncio.wait_for(asyncio.shield(prompt_task), CANCEL_WAIT)
        except (TimeoutError, Exception):
            prompt_task.cancel()
        await self._persist(added, "cancelled", CANCELLED_RESULT)
        await self.spending.end()
        if response is not None:
            total = await self._usage(response)
        text = f"stopped: {breach.reason}; the agent's turn was cancelled (session/cancel)"
        self.emit(ev.Notice(self.session.id, text, "error"))
        return await self._finish(TurnStatus.FAILED, added, total, text, BUDGET_KIND)

    def _exited(self, proc: AgentProcess, task: asyncio.Task[int]) -> None:
        """The agent exited: forget it (the next prompt starts it again); say so when no turn runs."""
        if self.proc is not proc:
            return  # stopped on purpose, or already replaced
        self.proc, self.conn = None, None
        if self._turn_id is None and not task.cancelled():
            text = self._crash_text(proc, "exited", task.result()) + "\nSend a prompt to start it again."
            self.emit(ev.Notice(self.session.id, text, "error"))

    async def aclose(self) -> None:
        """Stop the agent (its whole process group); the session's transcript stays."""
        proc, conn = self.proc, self.conn
        self.proc, self.conn = None, None
        self.acp.cancel_all()
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close()
        if proc is not None:
            await proc.stop()

    # -- turns ---------------------------------------------------------------------------------------
    async def run_turn(self, prompt: str, resume: ApprovalRecord | None = None) -> TurnResult:
        """Send ``prompt`` to the agent and stream its updates until it ends the turn (``resume`` is
        never given: an external agent's ask is not resumed after a restart, see
        ``paragents.sessions.approvals``). Never raises
        for agent failures (launch, crash, refusal: the turn fails with the reason and stderr);
        re-raises CancelledError after ``session/cancel`` and recording the turn as cancelled."""
        from paragents.store.records import StoreError

        sid = self.session.id
        added: list[Message] = []
        total = Usage()
        await self._await_agent_session(prompt)
        try:
            await self.sync()
            self._turn_id = await self.store.start_turn(sid, prompt)
        except StoreError as exc:
            self.emit(ev.TurnStarted(sid, prompt))
            return await self._store_failed(exc, added, total)
        self._set_state(SessionState.RUNNING)
        self.emit(ev.TurnStarted(sid, prompt))
        prompt_task: asyncio.Future[PromptResponse] | None = None
        try:
            await self._append(user_message(prompt), added)
            try:
                await self.start()
            except AcpLaunchError as exc:
                return await self._finish(TurnStatus.FAILED, added, total, str(exc), AGENT_KIND)
            if self.stale is not None:  # this launch found it cannot reload (no launch at the reopen)
                await self._await_agent_session(prompt, started=True)
            if self.budget is not None:
                self.budget.start_clock()
            stopped = await self._hold_at_budget(prompt)
            if stopped is not None:
                text = f"stopped at a pause: {stopped.reason}; the prompt was not sent to the agent"
                return await self._finish(TurnStatus.FAILED, added, total, text, BUDGET_KIND)
            proc, exit_task = self.proc, self._exit
            assert proc is not None and exit_task is not None
            self.log.take()  # updates that came between turns
            self.acp.approved.clear()  # what request_permission allowed is for this turn only
            prompt_task = asyncio.ensure_future(
                self.conn.prompt(session_id=self.remote_id, prompt=[text_block(prompt)])
            )
            crossed = self.spending.begin()
            done, _ = await asyncio.wait({prompt_task, exit_task, crossed}, return_when="FIRST_COMPLETED")
            if crossed in done and prompt_task not in done and exit_task not in done:
                return await self._stop_at_cap(crossed.result(), prompt_task, added, total)
            crossed.cancel()
            await self.spending.end()
            lost = prompt_task in done and not isinstance(prompt_task.exception(), RequestError | None)
            if lost:  # the connection closed: the agent is exiting (its code and stderr follow)
                await asyncio.wait({exit_task}, timeout=CANCEL_WAIT)
            if prompt_task not in done or lost:
                prompt_task.cancel()
                if not exit_task.done():
                    await proc.stop()
                await self._persist(added, "error", "the agent exited before this call finished")
                text = self._crash_text(proc, "exited during the turn", exit_task.result())
                return await self._finish(
                    TurnStatus.FAILED, added, total, text + "\nSend a prompt to start it again.", AGENT_KIND
                )
            try:
                response = prompt_task.result()
            except RequestError as exc:
                await self._persist(added)
                text = f"agent {self.spec.name!r} answered the prompt with an error: {exc} {exc.data or ''}"
                return await self._finish(TurnStatus.FAILED, added, total, text.strip(), AGENT_KIND)
            await self._persist(added)
            total = await self._usage(response)
            if response.stop_reason == "cancelled":
                note = "cancelled (the agent's stop reason: cancelled)"
                return await self._finish(TurnStatus.CANCELLED, added, total, note, "cancelled")
            if response.stop_reason in STOP_REASONS:
                self.emit(
                    ev.Notice(sid, f"the agent stopped: {STOP_REASONS[response.stop_reason]}", "warning")
                )
            return await self._finish(TurnStatus.COMPLETED, added, total)
        except StoreError as exc:
            return await self._store_failed(exc, added, total)
        except asyncio.CancelledError:
            await asyncio.shield(self._cancelled(prompt_task, added, total))
            raise

    async def _persist(self, added: list[Message], outcome: str = "error", note: str = "") -> None:
        """Store the turn's messages collected from the updates (closing open tool calls with
        ``outcome`` and ``note``); the last reply is shown now."""
        sid = self.session.id
        for message in self.log.end(outcome, note or "the agent reported no result"):
            self.emit(ev.MessageAdded(sid, message))
        for message, result_outcome in self.log.take():
            msg_id = await self.store.append_message(
                sid, message, turn_id=self._turn_id, outcome=result_outcome, expect_revision=self.revision
            )
            self._written(msg_id)
            self.history.append(message)
            tool = message.get("role") == "tool"
            added.append({**message, "outcome": result_outcome or "ok"} if tool else message)

    async def _usage(self, response: PromptResponse) -> Usage:
        """Record the turn's usage (the agent's, when it reports it) and the context size it last said.
        Its money is the cost the agent reported (``spending``), else its tokens at the model's prices
        (``models."acp:NAME"``), when set."""
        sid = self.session.id
        got = response.usage
        usage = Usage(got.input_tokens, got.output_tokens, got.total_tokens) if got is not None else Usage()
        context, window = self.log.context or (self.session.context_tokens, self.session.context_window)
        spend: Spend | None = None
        if got is not None:
            cost = 0.0 if self.spending.in_usd else request_cost(self.config, self.session.model, usage)
            await self.store.add_usage(
                sid, self._turn_id, self.session.model, usage, estimated=False, cost_usd=cost
            )
            spend = (getattr(self.session, "spend", None) or Spend()) + Spend(
                usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens, cost
            )
        if got is not None or self.log.context is not None:
            self.emit(
                ev.UsageUpdated(
                    sid, self.session.usage + usage, context, window or self.session.context_window, spend
                )
            )
        return usage

    async def _cancelled(
        self, prompt_task: asyncio.Future[PromptResponse] | None, added: list[Message], total: Usage
    ) -> None:
        """``session/cancel``: answer pending asks "cancelled", wait a little for the agent's stop
        reason, keep what it did, end the turn as cancelled with that reason."""
        from paragents.store.records import StoreError

        sid = self.session.id
        self.acp.cancel_all()
        with contextlib.suppress(StoreError):
            await self.spending.end()
        reason = "no answer"
        if self.conn is not None and self.remote_id:
            with contextlib.suppress(Exception):
                await self.conn.cancel(session_id=self.remote_id)
        if prompt_task is not None:
            try:
                reason = (await asyncio.wait_for(prompt_task, CANCEL_WAIT)).stop_reason
            except (Exception, asyncio.CancelledError):
                prompt_task.cancel()
        try:
            await self._persist(added, "cancelled", CANCELLED_RESULT)
        except StoreError as exc:
            self.emit(ev.Notice(sid, f"cancelled, but not everything could be saved: {exc}", "error"))
        note = f"cancelled by the user (the agent's stop reason: {reason})"
        self.emit(ev.Notice(sid, f"cancelled: {note}", "warning"))
        await self._finish(TurnStatus.CANCELLED, added, total, note, "cancelled")

    async def compact(self, focus: str | None = None, *, auto: bool = False) -> CompactionOutcome:
        """External agents keep their own context: paragents does not compact it."""
        text = f"not compacted: {self.spec.name} manages its own context"
        if not auto:
            self.emit(ev.Notice(self.session.id, text))
        return CompactionOutcome(False, text)

    # -- paragents' tools, for the agent's file and terminal requests ---------------------------------
    def summarize(self, tool_name: str, args: dict[str, Any]) -> str:
        tool = self.tools.get(tool_name)
        return tool.summarize(args) if tool is not None else tool_name

    async def preview(self, tool_name: str, args: dict[str, Any]) -> CallPreview | None:
        return await self._preview(tool_name, args)

    async def run_tool(
        self,
        tool_name: str,
        args: dict[str, Any],
        *,
        workdir: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> ToolResult:
        """Run paragents' tool ``tool_name`` for the agent (hooks for stale reads; sandbox for commands)."""
        tool = self.tools.get(tool_name)
        assert tool is not None, tool_name
        sandbox, _status = self._sandbox_for(tool.family)
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


def _version() -> str:
    try:
        return metadata.version("paragents")
    except metadata.PackageNotFoundError:
        return "0"
