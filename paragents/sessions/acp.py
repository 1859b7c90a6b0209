"""Sessions run by external ACP agents (paragents.acp): making one (``/new --agent NAME``,
``paragents run --agent NAME``), building its agent when a view is loaded, stopping the agents'
subprocesses at close and shutdown. The ACP SDK (seconds of CPU to import) is imported only when a
session runs an external agent. Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from paragents import events as ev
from paragents.acp.launch import AcpLaunchError, AgentUnavailable, find_program, resolve_agent
from paragents.sessions.view import SessionError

if TYPE_CHECKING:
    from paragents.acp.agent import AcpAgent
    from paragents.sessions.core import SessionsCore
    from paragents.sessions.view import SessionView

MODEL_PREFIX = "acp:"
"""A session run by agent NAME shows ``acp:NAME`` as its model."""


class SessionMaker(Protocol):
    """What :func:`new_agent_session` needs of ``SessionLifecycle`` (which imports this module)."""

    async def new_session(
        self,
        name: str | None = None,
        *,
        model: str | None = None,
        workdir: Path | None = None,
        mode: str | None = None,
        open_panel: bool = True,
        lane: str | bool | None = None,
        base: str | None = None,
        on: str | None = None,
    ) -> SessionView: ...


async def new_agent_session(
    core: SessionsCore,
    lifecycle: SessionMaker,
    agent: str,
    name: str | None = None,
    *,
    workdir: Path | None = None,
    open_panel: bool = True,
    lane: str | bool | None = None,
    base: str | None = None,
    start: bool = True,
    mode: str | None = None,
) -> SessionView:
    """Create a session run by external agent ``agent`` and (``start``) launch it in the background
    (a launch failure is shown in its panel, with the agent's stderr and exit code). Raises
    SessionError for an unknown agent or one whose program is missing (with its install command)."""
    try:
        spec = resolve_agent(agent, core.config.agents)
        find_program(spec)
    except AgentUnavailable as exc:
        raise SessionError(str(exc)) from None
    view = await lifecycle.new_session(
        name,
        model=MODEL_PREFIX + agent,
        workdir=workdir,
        mode=mode,
        open_panel=open_panel,
        lane=lane,
        base=base,
        on="local" if lane else None,  # an external agent runs here, in a worktree of this machine
    )
    await core.store.agent_sessions.set(view.id, agent)
    await build_agent(core, view, agent, None)
    made = agent_of(core, view.id)
    if start and made is not None:
        task = asyncio.create_task(_start(core, made))
        _STARTS.add(task)
        task.add_done_callback(_STARTS.discard)
    return view


_STARTS: set[asyncio.Task[None]] = set()


async def _start(core: SessionsCore, agent: AcpAgent, *, quiet: bool = False) -> None:
    sid = agent.session.id
    try:
        await agent.link.start()
    except AcpLaunchError as exc:
        core.emit(ev.Notice(sid, str(exc), "error"))
    else:
        if not quiet:
            core.emit(ev.Notice(sid, f"{agent.link.name} is ready (Agent Client Protocol)"))


async def build_agent(core: SessionsCore, view: SessionView, agent: str, remote_id: str | None) -> None:
    """Replace the session's agent by an :class:`AcpAgent` for ``agent`` (keeping its history)."""
    # deferred: start-up time, the ACP SDK (seconds to import) loads only for a session an external agent runs
    from paragents.acp.agent import AcpAgent

    old = core.agents.get(view.id)
    try:
        spec = resolve_agent(agent, core.config.agents)
    except AgentUnavailable as exc:
        core.emit(ev.Notice(view.id, str(exc), "error"))
        return
    made = AcpAgent(
        spec=spec,
        conflicts=core.conflicts,
        remote_id=remote_id,
        save_remote=functools.partial(core.store.agent_sessions.set, view.id, agent),
        session=view,
        tools=core.tools,
        policy=core.policy,
        store=core.store,
        config=core.config,
        emit=core.emit,
        history=list(old.record.history) if old is not None else [],
        on_read=core.conflicts.read_hook(view.id),
        on_write=core.conflicts.write_hook(view.id),
        budget=core.budgets.meter(view.id),
    )
    if old is not None:
        made.record.revision, made.record.last_message_id = old.record.revision, old.record.last_message_id
    core.agents[view.id] = made


async def attach_if_agent(core: SessionsCore, view: SessionView) -> None:
    """When the session of ``view`` runs an external agent, give it its :class:`AcpAgent` (after the
    view's own agent was built from the store); the agent starts with the next prompt."""
    found = await core.store.agent_sessions.get(view.id)
    if found is not None:
        await build_agent(core, view, found[0], found[1])
        made = agent_of(core, view.id)
        if made is not None and found[1]:  # launch it now: can it continue the stored conversation?
            made.wait.probe = probe = asyncio.create_task(_start(core, made, quiet=True))
            _STARTS.add(probe)
            probe.add_done_callback(_STARTS.discard)


async def start_new_remote(core: SessionsCore, sid: str) -> None:
    """``/agent new``: start a new agent session in session ``sid`` (its external agent cannot continue
    the stored conversation, or the user wants a fresh one). Raises SessionError."""
    agent = agent_of(core, sid)
    if agent is None:
        raise SessionError("this session is not run by an external agent (/new --agent NAME opens one)")
    stale = agent.wait.stale
    if stale is None and core.scheduler.is_running(sid):
        raise SessionError("a turn is running: cancel it first (Esc), then /agent new")
    try:
        await agent.link.start_new_session()
    except AcpLaunchError as exc:
        if agent.wait.stale is not None:  # the panel offers it again
            core.emit(ev.AgentSessionStale(sid, agent.wait.stale))
        raise SessionError(str(exc)) from None


async def stop_agent(core: SessionsCore, sid: str) -> None:
    """Stop the external agent of session ``sid`` (its process group), if it has one."""
    agent = agent_of(core, sid)
    if agent is not None:
        with contextlib.suppress(Exception):
            await agent.aclose()


async def stop_all(core: SessionsCore) -> None:
    """Stop every external agent (shutdown)."""
    await asyncio.gather(*(stop_agent(core, sid) for sid in list(core.agents)))


def agent_of(core: Any, sid: str) -> AcpAgent | None:
    """The external agent of session ``sid``, or None for paragents' own agent."""
    module = sys.modules.get("paragents.acp.agent")  # not imported: no session runs one
    agent = core.agents.get(sid)
    return agent if module is not None and isinstance(agent, module.AcpAgent) else None
