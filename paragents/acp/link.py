"""The link to one external ACP agent (:class:`AgentLink`): its subprocess started on demand (its own
process group), ``initialize`` time-boxed, then its session opened: ``session/load`` of the stored
agent session when the agent supports it (its replay muted: paragents already shows it), else
``session/resume``, else ``session/new`` (a reopened session it cannot continue waits for the user:
:class:`~paragents.acp.held.SessionWait`). Its stderr and exit code are shown when it fails to start or
crashes; the next prompt starts it again. Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

from acp import PROTOCOL_VERSION, RequestError, connect_to_agent
from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation

from paragents import events as ev
from paragents.acp.client import AcpClient, AgentSide
from paragents.acp.held import SessionWait
from paragents.acp.launch import AcpLaunchError, AgentSpec, AgentUnavailable, find_program
from paragents.acp.process import AgentProcess
from paragents.acp.spending import AgentSpending
from paragents.agent.approval import ApprovalStore
from paragents.agent.turn import TurnRecord
from paragents.store.agent_sessions import AgentSessionsRepo

CANCEL_WAIT = 5.0
"""Seconds to wait for the agent's answer to ``session/cancel`` (or to exit) before going on."""


class _LinkStore(ApprovalStore, Protocol):
    """The store's tables the link uses: its client's (asks), and the agent's own session id and
    reported cost (``paragents.store.Store`` is one)."""

    @property
    def agent_sessions(self) -> AgentSessionsRepo: ...


class _Owner(AgentSide, Protocol):
    """What the link uses of its :class:`~paragents.acp.agent.AcpAgent` (a protocol: no import cycle)."""

    spec: AgentSpec
    wait: SessionWait
    spending: AgentSpending
    record: TurnRecord

    @property
    def store(self) -> _LinkStore: ...


class AgentLink:
    """The process and the open session of one external agent (see the module docstring).
    ``remote_id`` is the agent's own session id from a previous run (reloaded when supported);
    ``save_remote`` stores a new one."""

    def __init__(
        self,
        owner: _Owner,
        remote_id: str | None = None,
        save_remote: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        self.owner = owner
        self.spec = owner.spec
        self.remote_id = remote_id
        self.save_remote = save_remote
        self.client = AcpClient(owner)
        """paragents' side of the connection (permission, fs and terminal requests); made anew at
        each launch."""
        self.proc: AgentProcess | None = None
        self.conn: Any = None
        self.exit: asyncio.Task[int] | None = None
        """Ends with the agent's exit code."""
        self.init_timeout = self.spec.init_timeout
        self.load_supported: bool | None = None
        """Whether the running agent supports ``session/load`` (None before it started)."""
        self.resume_supported: bool | None = None
        """Whether the running agent supports ``session/resume`` (None before it started)."""
        self.agent_info: str | None = None
        self.restored = remote_id is not None
        """The agent session id came from the store (a restart or a reopen), not from this process."""
        self._start_lock = asyncio.Lock()

    @property
    def name(self) -> str:
        """The agent's own name once it said it, else its table name."""
        return self.agent_info or self.spec.name

    @property
    def running(self) -> bool:
        """True while the agent process runs with an open session."""
        return self.proc is not None and self.proc.returncode is None and self.conn is not None

    async def start(self) -> None:
        """Start the agent and open its session unless it runs. Raises AcpLaunchError."""
        async with self._start_lock:
            if not self.running:
                await self._launch()

    def crash_text(self, proc: AgentProcess, what: str, code: int | None) -> str:
        """Says the agent ``what`` (exited, ...) with exit ``code`` and its stderr."""
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
            raise AcpLaunchError(self.crash_text(proc, f"exited during {what}", exit_task.result()))
        stderr = proc.stderr_text().strip()
        raise AcpLaunchError(
            f"agent {self.spec.name!r} did not answer {what} within {self.init_timeout:.0f} s"
            + (f"\nstderr:\n{stderr}" if stderr else "")
        )

    def _cwd(self) -> Path:
        spec = self.spec
        return Path(spec.cwd).expanduser() if spec.cwd else self.owner.session.workdir

    async def _launch(self) -> None:
        owner, spec = self.owner, self.spec
        sid = owner.session.id
        try:
            program = find_program(spec)
        except AgentUnavailable as exc:
            raise AcpLaunchError(str(exc)) from None
        cwd = self._cwd()
        env = {**dict(getattr(owner.session, "lane_env", None) or {}), **spec.env}
        try:
            proc = await AgentProcess.start([program, *spec.args], cwd=cwd, env=env)
        except OSError as exc:
            raise AcpLaunchError(f"agent {spec.name!r} could not be started: {exc}") from None
        assert proc.process.stdin is not None and proc.process.stdout is not None
        self.client = AcpClient(owner)
        conn = connect_to_agent(self.client, proc.process.stdin, proc.process.stdout)
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
                    owner.emit(ev.Notice(sid, str(exc), "warning"))  # refused: as if it could not resume
                else:
                    resumed = True
                    owner.emit(ev.Notice(sid, f"{self.agent_info}: its session was resumed (session/resume)"))
            if resumed:
                pass
            elif self.remote_id and self.restored and not self.load_supported and not owner.wait.auto_new:
                owner.wait.go_stale(self.name)  # the process runs, with no session until the user starts one
            elif self.remote_id and self.load_supported:
                owner.log.muted = True  # the agent replays the conversation paragents already shows
                try:
                    opened = await self._race(
                        proc,
                        exit_task,
                        conn.load_session(cwd=str(cwd), session_id=self.remote_id, mcp_servers=[]),
                        "session/load",
                    )
                finally:
                    owner.log.muted = False
                owner.emit(ev.Notice(sid, f"{self.agent_info}: its session was reloaded (session/load)"))
            else:
                if self.remote_id:
                    owner.emit(
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
                owner.controls.opened(opened, self.agent_info)
            modes = getattr(opened, "modes", None)
            if modes is not None and modes.available_modes:
                owner.log.mode = modes.current_mode_id
                names = ", ".join(m.id for m in modes.available_modes)
                owner.emit(ev.Notice(sid, f"agent modes: {names} (now {modes.current_mode_id})"))
        except BaseException:
            with contextlib.suppress(Exception):
                await conn.close()
            await proc.stop()
            exit_task.cancel()
            raise
        self.proc, self.conn, self.exit = proc, conn, exit_task
        exit_task.add_done_callback(lambda task, proc=proc: self._exited(proc, task))  # type: ignore[misc]

    async def _opened_new(self, remote_id: str) -> None:
        """A new agent session ``remote_id`` was opened: remember it; its cost counts from zero."""
        self.remote_id, self.restored = remote_id, False
        self.owner.spending.new_session()
        if self.save_remote is not None:
            await self.save_remote(remote_id)
            await self.owner.store.agent_sessions.set_reported_cost(self.owner.session.id, None)

    async def start_new_session(self) -> None:
        """Start a new agent session in this session (``/agent new``, the panel's bar): the stored
        transcript stays, a note marks where the new agent session begins, and a prompt waiting for it
        is sent. Raises AcpLaunchError when the agent cannot be started or refuses."""
        async with self._start_lock:
            old, self.remote_id = self.remote_id, None
            try:
                if self.running:
                    assert self.proc is not None and self.exit is not None
                    opened = await self._race(
                        self.proc,
                        self.exit,
                        self.conn.new_session(cwd=str(self._cwd()), mcp_servers=[]),
                        "session/new",
                    )
                    await self._opened_new(opened.session_id)
                    self.owner.controls.opened(opened, self.name)
                else:
                    await self._launch()
            except BaseException:
                if self.remote_id is None:
                    self.remote_id = old
                raise
        self.owner.wait.fresh(self.name)

    async def send_cancel(self) -> None:
        """``session/cancel`` of the agent's turn (its answer is the prompt's stop reason)."""
        if self.conn is not None and self.remote_id:
            with contextlib.suppress(Exception):
                await self.conn.cancel(session_id=self.remote_id)

    def _exited(self, proc: AgentProcess, task: asyncio.Task[int]) -> None:
        """The agent exited: forget it (the next prompt starts it again); say so when no turn runs."""
        if self.proc is not proc:
            return  # stopped on purpose, or already replaced
        self.proc, self.conn = None, None
        if self.owner.record.turn_id is None and not task.cancelled():
            text = self.crash_text(proc, "exited", task.result()) + "\nSend a prompt to start it again."
            self.owner.emit(ev.Notice(self.owner.session.id, text, "error"))

    async def aclose(self) -> None:
        """Stop the agent (its whole process group); the session's transcript stays."""
        proc, conn = self.proc, self.conn
        self.proc, self.conn = None, None
        self.client.cancel_all()
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close()
        if proc is not None:
            await proc.stop()


def _version() -> str:
    try:
        return metadata.version("paragents")
    except metadata.PackageNotFoundError:
        return "0"
