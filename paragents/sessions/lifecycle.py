"""The lifecycle facet of the session layer (:class:`Lifecycle`): a session's life (new, with an
external agent, reopen, attach for a headless run, close, clear, fork, take over) and the project's
session list. Every change of a view goes through an event. Nothing here imports Textual."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from paragents import events as ev
from paragents.agent.compaction import load_compaction
from paragents.lanes import gone_dir
from paragents.models import Message, SessionState
from paragents.sessions import acp as acp_sessions
from paragents.sessions import lanes
from paragents.sessions.controls import SessionControls, check_mode
from paragents.sessions.core import SessionsCore
from paragents.sessions.holds import BUSY_STATES, SessionHolds
from paragents.sessions.names import MAX_NAME, check_name, next_number_name, unique_name
from paragents.sessions.opening import SessionOpening
from paragents.sessions.view import SessionError, SessionView
from paragents.store.records import SessionRecord


class Lifecycle(Protocol):
    """A session's life as clients drive it (``runtime.lifecycle``)."""

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
        self,
        agent: str,
        name: str | None = None,
        *,
        workdir: Path | None = None,
        open_panel: bool = True,
        lane: str | bool | None = None,
        base: str | None = None,
        start: bool = True,
        mode: str | None = None,
    ) -> SessionView: ...
    async def start_new_agent_session(self, sid: str) -> None: ...
    async def close_session(self, sid: str) -> None: ...
    async def reopen_session(self, sid: str) -> SessionView: ...
    async def attach_session(
        self,
        name: str,
        *,
        model: str | None = None,
        workdir: Path | None = None,
        mode: str | None = None,
        take_over: bool = False,
        lane: str | bool | None = None,
        on: str | None = None,
    ) -> tuple[SessionView, bool]: ...
    async def clear_session(self, sid: str) -> None: ...
    async def fork(self, sid: str, name: str | None = None) -> SessionView: ...
    async def take_over(self, sid: str) -> SessionView: ...
    async def list_sessions(self) -> list[SessionRecord]: ...
    async def find_session(self, name: str) -> SessionRecord | None: ...


def refuse_gone_workdir(rec: SessionRecord) -> None:
    """Refuse to open a closed session whose directory is gone (a lane discarded by fan-out's compare
    screen or ``lanes gc``, a folder the user removed): its tools would run nowhere and a write would
    make the removed path again as a plain folder no lane knows. Raises SessionError."""
    gone = gone_dir(rec.workdir)
    if gone is None:
        return
    raise SessionError(f"session {rec.name!r} was not opened: {gone}; start a new session instead")


class SessionLifecycle:
    """The :class:`Lifecycle` facet of the sessions of one project (see the module docstring)."""

    def __init__(
        self, core: SessionsCore, opening: SessionOpening, holds: SessionHolds, controls: SessionControls
    ) -> None:
        self.core = core
        self.opening = opening
        self.holds = holds
        self.controls = controls

    async def _taken(self) -> set[str]:
        return {r.name for r in await self.core.store.sessions.all(self.core.project_dir)}

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
    ) -> SessionView:
        """Create, persist and open a new session; return its view (``open_panel``: shown in the TUI).

        ``lane`` (True, or a lane name) opens it in its own git worktree made from ``base`` (default:
        HEAD); with ``lanes: auto`` it gets one when another session already writes here. ``on``: where
        the lane runs (local, container, k8s; default ``lanes.backend``; docs/remote.md).
        Raises SessionError for a bad name, an unknown mode, a workdir that is not a directory, or a
        lane that cannot be made."""
        core = self.core
        if not (model or core.config.model):
            raise SessionError("no model is configured: run /setup, or give one with /new --model NAME")
        taken = await self._taken()
        if name is not None:
            check_name(name)
            if name in taken:
                raise SessionError(f"a session named {name!r} already exists in this project (see /sessions)")
        name = name or next_number_name(taken)
        made = None
        if on is not None and not lane:
            raise SessionError("--on NAME places a lane: give --lane too (`/new --lane --on container`)")
        if lane:
            made = await lanes.make_lane(core, name, lane, base, on=on)
        elif lane is None and lanes.wants_auto_lane(core):
            made = await lanes.auto_lane(core, name, base)  # None: shares the checkout (noted)
        if made is not None:
            workdir = Path(made.lane.path)
        try:
            view = await self._create(name, model, workdir, mode, open_panel)
        except BaseException:
            if made is not None:
                await lanes.drop_new_lane(core, made.lane)
            raise
        if made is not None:
            await lanes.join_lane(core, view, made, notices=not open_panel)
        return view

    async def _create(
        self, name: str, model: str | None, workdir: Path | None, mode: str | None, open_panel: bool
    ) -> SessionView:
        core = self.core
        wd = (workdir or core.project_dir).expanduser()
        if not wd.is_absolute():
            wd = (core.project_dir / wd).resolve()
        if not wd.is_dir():
            raise SessionError(f"--dir {wd} is not a directory")
        mode = check_mode(mode or getattr(core.policy, "default_mode", None) or "default")
        rec = await core.store.sessions.create(
            name=name, project_dir=core.project_dir, workdir=wd, model=model or core.config.model, mode=mode
        )
        if open_panel:
            await core.store.sessions.update(rec.id, is_open=True, position=len(core.sessions))
        else:  # headless sessions are not shown as TUI panels until reopened from /sessions
            await core.store.sessions.update(rec.id, is_open=False)
        view = await self.opening.open_view(await core.store.sessions.get(rec.id))
        core.emit(ev.SessionStateChanged(view.id, view.state, "created"))
        return view

    async def close_session(self, sid: str) -> None:
        """Cancel the session's turn, drop its queue and close its panel; it stays in history (and
        this process stops holding it). Its queued prompts stay saved: reopened, they are back in
        its prompt box (sessions/drafts.py)."""
        core = self.core
        view = core.view(sid)
        core.drafts.freeze(sid)  # its queued prompts stay saved: they come back when it is reopened
        await core.scheduler.drop(sid)
        await core.drafts.flushed()
        await acp_sessions.stop_agent(core, sid)
        if view.read_only:
            await core.store.sessions.update(sid, is_open=False)  # the holder's state stays
        else:
            await core.store.sessions.update(sid, is_open=False, state=SessionState.IDLE.value)
            await core.store.holders.release(sid)
        await core.remote.release(sid)
        core.holds.discard(sid)
        core.sessions.pop(sid, None)
        core.agents.pop(sid, None)
        core.turn_done.pop(sid, None)
        await core.conflicts.release(sid)
        core.conflicts.forget(sid)
        core.mcp_pool.release(sid)

    async def reopen_session(self, sid: str) -> SessionView:
        """Open a persisted session again (no-op when open); return its view. Raises SessionError."""
        core = self.core
        if sid in core.sessions:
            return core.sessions[sid]
        rec = await core.store.sessions.get(sid)
        if rec is None:
            raise SessionError(f"no session with id {sid}")
        refuse_gone_workdir(rec)
        await core.store.sessions.update(sid, is_open=True, position=len(core.sessions))
        return await self.opening.open_view(await core.store.sessions.get(sid))

    async def attach_session(
        self,
        name: str,
        *,
        model: str | None = None,
        workdir: Path | None = None,
        mode: str | None = None,
        take_over: bool = False,
        lane: str | bool | None = None,
        on: str | None = None,
    ) -> tuple[SessionView, bool]:
        """Open the session ``name`` of this project for a headless run, creating it when missing.

        Returns ``(view, created)``. An existing session keeps its history; ``model``/``mode`` given
        here apply to it from now on. Does not change which sessions the TUI shows. Raises
        ``SessionHeld`` when another live process holds the session, unless ``take_over``."""
        core = self.core
        rec = await core.store.sessions.find(core.project_dir, name)
        if rec is None:
            view = await self.new_session(
                name, model=model, workdir=workdir, mode=mode, open_panel=False, lane=lane, on=on
            )
            return view, True
        if rec.id not in core.sessions:
            refuse_gone_workdir(rec)
        previous = await core.store.holders.acquire(rec.id, take_over=take_over)  # raises SessionHeld
        if previous is not None:
            why = "as --take-over asked" if take_over else "its process is gone"
            core.notes.append(f"session {name!r}: taken over from {previous.describe()} ({why})")
        view = core.sessions.get(rec.id) or await self.opening.open_view(rec)
        if model and model != view.model:
            await self.controls.set_model(view.id, model)
        if mode and mode != view.mode:
            await self.controls.set_mode(view.id, mode)
        return view, False

    async def clear_session(self, sid: str) -> None:
        """Start a new conversation in the session (the old one stays in the store's history)."""
        core = self.core
        await core.loaded_event.wait()
        view = core.writable(sid)
        if core.scheduler.is_running(sid):
            raise SessionError("the session is running a turn: cancel it (Esc) before /clear")
        await core.store.sessions.new_conversation(sid)
        await core.store.sessions.update(sid, last_prompt_tokens=0)
        core.emit(ev.ConversationCleared(sid))
        record = core.agents[sid].record
        record.history.clear()
        record.compaction = None
        await record.mark_current()
        core.emit(ev.SessionStateChanged(sid, view.state, "cleared"))
        if acp_sessions.agent_of(core, sid) is not None:  # the agent forgets too: a new agent session
            await acp_sessions.start_new_remote(core, sid)

    async def new_agent_session(
        self,
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
        """A session run by the external ACP agent ``agent`` (see paragents.sessions.acp); ``mode``
        is the permission mode its requests are decided in (default: the settings' defaultMode)."""
        return await acp_sessions.new_agent_session(
            self.core,
            self,
            agent,
            name,
            workdir=workdir,
            open_panel=open_panel,
            lane=lane,
            base=base,
            start=start,
            mode=mode,
        )

    async def start_new_agent_session(self, sid: str) -> None:
        """``/agent new``: a new external agent session in ``sid`` (see paragents.sessions.acp)."""
        await acp_sessions.start_new_remote(self.core, sid)

    async def take_over(self, sid: str) -> SessionView:
        """Take the session over from the process holding it (the user confirmed): this process
        becomes its writer and reloads its history (what the other process wrote is kept). A session
        this process already holds is left as it is, with a note saying so."""
        core = self.core
        view = core.view(sid)
        if not view.read_only:  # said, not silent: the user may think the command was lost
            core.emit(
                ev.Notice(sid, f"session {view.name!r} is already held by this window: nothing to take over")
            )
            return view
        await core.loaded_event.wait()
        before = len(core.notes)
        await self.holds.hold(view, take_over=True)
        state = SessionState.IDLE if view.state in BUSY_STATES else view.state
        agent = core.agents.get(sid)
        if agent is not None:
            await agent.record.sync()
        rec = await core.store.sessions.get(sid)  # its usage as the holder left it, as a reopen reads it
        if rec is not None:
            core.emit(ev.UsageUpdated(sid, rec.usage, rec.last_prompt_tokens, view.context_window))
        await core.budgets.load(view)  # and its spend so far (f3, the title)
        # the note this take-over made, never an older one (core.notes keeps the start's notes too)
        made = core.notes[before:]
        note = made[-1] if made else f"session {view.name!r}: taken over (no other process held it any more)"
        core.emit(ev.SessionStateChanged(sid, state, "taken over"))
        core.emit(ev.Notice(sid, note, "warning"))
        return view

    async def list_sessions(self) -> list[SessionRecord]:
        """Return every persisted session of the project (store ``SessionRecord``s)."""
        return list(await self.core.store.sessions.all(self.core.project_dir))

    async def find_session(self, name: str) -> SessionRecord | None:
        """Return the persisted session named ``name`` in this project, or None."""
        return await self.core.store.sessions.find(self.core.project_dir, name)

    async def fork(self, sid: str, name: str | None = None) -> SessionView:
        """Start a new session (same model, mode and workdir) holding a copy of this one's
        provider-ready history, its compaction in force and its session notes; return its view.

        Tool calls still running in the source are answered "interrupted" in the copy (the store's
        repair), so the copy is valid at once. Raises SessionError for a bad or taken name."""
        core = self.core
        await core.loaded_event.wait()
        view = core.view(sid)
        agent = core.agents[view.id]
        external = acp_sessions.agent_of(core, sid)
        if external is not None:  # its context is the agent's own: a copy here would go to the endpoint
            raise SessionError(
                f"/fork copies paragents' own conversations; {external.spec.name} keeps its context "
                f"itself: open another with /new --agent {external.spec.name}"
            )
        if name is None:
            name = unique_name(f"{view.name[: MAX_NAME - 6]}-fork", await self._taken())
        new = await self.new_session(name, model=view.model, workdir=view.workdir, mode=view.mode)
        history = list(agent.record.history)
        running = core.scheduler.is_running(sid)
        if running:  # the running turn has no reply yet: copying its prompt would leave two in a row
            last_prompt = max((i for i, m in enumerate(history) if m.get("role") == "user"), default=None)
            if last_prompt is not None:
                history = history[:last_prompt]
        # The provider-ready history has no outcomes: take each tool result's from the source's view
        # (a denied call stays denied in the copy, in the store and on screen).
        outcomes = {m.get("tool_call_id"): m.get("outcome") for m in view.messages if m.get("role") == "tool"}

        def outcome_of(message: Message) -> str | None:
            return outcomes.get(message.get("tool_call_id")) if message.get("role") == "tool" else None

        ids = [
            await core.store.messages.append(new.id, message, outcome=outcome_of(message))
            for message in history
        ]
        state = agent.record.compaction
        if state is not None and 0 < state.covered <= len(ids):
            await core.store.compactions.add(new.id, ids[state.covered - 1], state.summary)
        for note in core.notebook.session_notes(view.id):
            await core.store.notes.add(core.project_dir, note.text, session_id=new.id, author=note.author)
        copy = core.agents[new.id].record
        copy.history = await core.store.messages.load_history(new.id)
        copy.compaction = await load_compaction(core.store, new.id, copy.history)
        await copy.mark_current()
        # its context is the copied one: kept, so a reopened fork's header does not say `ctx 0%`
        await core.store.sessions.update(new.id, last_prompt_tokens=view.context_tokens)
        shown = tuple({**m, "outcome": outcome_of(m)} if outcome_of(m) else dict(m) for m in copy.history)
        core.emit(ev.ConversationLoaded(new.id, shown, view.context_tokens))
        await core.notebook.refresh(new.id)
        n = len(history)
        left = " (its running turn was not: it has no reply yet)" if running else ""
        core.emit(
            ev.Notice(new.id, f"forked from {view.name}: {n} message{'' if n == 1 else 's'} copied{left}")
        )
        return new
