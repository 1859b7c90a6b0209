"""The state every part of the session layer shares (:class:`SessionsCore`): the open sessions and
their agents, the event path, and the running of queued prompts.

:meth:`SessionsCore.emit` is the one path of a session's state: it applies the event to the session's
view (:meth:`SessionView.apply`, the one writer), then passes it to the observers and the sink.
Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from paragents import events as ev
from paragents.acp.held import WAITING_ON, held_note
from paragents.agent.context import build_system_prompt, load_instructions
from paragents.agent.protocol import SessionAgent
from paragents.config import LoadedConfig, RuntimeConfig
from paragents.conflicts import ConflictChecker
from paragents.mcp import McpPool
from paragents.models import SessionState, ToolCall, TurnResult, TurnStatus, Usage
from paragents.scheduler import PromptHeld, QueuedPrompt, Scheduler
from paragents.sessions.budgets import BudgetCommands
from paragents.sessions.decisions import TeamTalk
from paragents.sessions.drafts import SessionDrafts
from paragents.sessions.notes import NoteBook, note_line
from paragents.sessions.remote_lanes import RemoteLanes
from paragents.sessions.tool_rows import ToolRowKeeper
from paragents.sessions.view import SessionError, SessionView
from paragents.store import StoreError
from paragents.tools.registry import default_registry

if TYPE_CHECKING:
    from paragents.llm import ChatClient
    from paragents.permissions import Policy
    from paragents.store import Store

log = logging.getLogger(__name__)


class SessionsCore:
    """The shared state of the session layer for one project directory (the Runtime extends it)."""

    def __init__(
        self, project_dir: Path, loaded: LoadedConfig, store: Store, policy: Policy, client: ChatClient
    ) -> None:
        self.project_dir = project_dir
        self.loaded = loaded
        self.store = store
        self.policy = policy
        self.client = client
        self.tools = default_registry()
        self.notebook = NoteBook(store.notes, project_dir)
        self.sessions: dict[str, SessionView] = {}
        self.agents: dict[str, SessionAgent] = {}
        self.key_problem: str | None = None
        """Why the client has no API key (``api_key_env`` not set; ``Runtime.create(keyless_ok=True)``)."""
        self.notes: list[str] = []
        """Recovery notes of the start (interrupted turns repaired, reservations released, sessions
        taken over or held elsewhere): the TUI notifies them, ``paragents run`` prints them."""
        self.holds: set[str] = set()
        """Ids of the sessions this process holds (is the one writer of); see ``store.holders.acquire``."""
        self._sink: ev.EventSink | None = None
        self._buffer: list[ev.Event] = []
        self.observers: list[ev.EventSink] = []
        """Extra sinks that see every event before the sink (recorders, replay); they must not block."""
        self.recorder: Any = None
        self.lane_watcher: Any = None
        """The lanes' conflict predictor (paragents.sessions.lanes.LaneWatcher) once a lane is open."""
        self.remote = RemoteLanes(self)
        """The lanes of this process that run in a container or a Pod (docs/remote.md)."""
        self.lane_setup_output: Callable[[str, str], object] | None = None
        """Gets (lane name, line) of a new lane's setup output while it runs (the TUI streams it)."""
        self.cli_overrides: dict[str, Any] = {}
        """Config values given on the command line; they stay on top when the config is reloaded."""
        self.env: Mapping[str, str] | None = None
        """The environment the config was read with (None: ``os.environ``)."""
        self.holding_new_turns = False
        """While True, queued prompts do not start (``prompts.hold_new_turns``: a quit is confirmed)."""

        self.drafts = SessionDrafts(store.drafts, self.emit, self._requeue_held)
        """Unsent drafts and queued prompts kept across quits and crashes (sessions/drafts.py)."""
        self.tool_rows = ToolRowKeeper(
            store.tool_rows, lambda sid: getattr(self.agents.get(sid), "STORES_AFTER_CALLS", False) is True
        )
        """Keeps how each tool call was shown while it ran, for restored transcripts."""
        self.observers.append(self.tool_rows.observe)
        self.scheduler = Scheduler(
            loaded.config.max_parallel_turns, self._run_prompt, self.queue_changed, self._held
        )
        self.turn_done: dict[str, asyncio.Event] = {}
        self.unloaded: list[str] = []
        """Ids of sessions registered but not loaded yet (see ``Runtime.restore_views``)."""
        self.loaded_event = asyncio.Event()
        """Set while no registered session waits for its messages and agent."""
        self.loaded_event.set()
        self.conflicts = ConflictChecker(
            store,
            emit=self.emit,
            session_name=lambda sid: self.sessions[sid].name if sid in self.sessions else None,
            turn_of=lambda sid: self.agents[sid].record.turn_id if sid in self.agents else None,
            workdir_of=lambda sid: self.sessions[sid].workdir if sid in self.sessions else project_dir,
            set_waiting=self._set_waiting,
            summarize=self._summarize_call,
            resources=loaded.config.resources,
        )
        """The preflight conflict checker shared by every session's agent (paragents.conflicts)."""
        self.budgets = BudgetCommands(self)
        """Budget caps per session, ``/budget`` and the answers to a pause (sessions/budgets.py)."""
        self.mcp_pool = McpPool(
            project_dir, loaded.config.mcp, [f.path for f in getattr(policy, "files", [])]
        )
        """The MCP servers of the project, shared by its sessions (paragents.mcp, docs/mcp.md)."""
        self.notes.extend(self.mcp_pool.problems)
        self.team = TeamTalk(self)
        """Project decisions and notes between sessions (sessions/decisions.py; wt/fanteam)."""

    @property
    def config(self) -> RuntimeConfig:
        """The effective ``RuntimeConfig``."""
        return self.loaded.config

    # -- events ---------------------------------------------------------------------------------------
    def set_sink(self, sink: ev.EventSink) -> None:
        """Set the one callable that receives every core event (events before this are replayed)."""
        self._sink = sink
        buffered, self._buffer = self._buffer, []
        for event in buffered:
            sink(event)

    def emit(self, event: ev.Event) -> None:
        """Apply ``event`` to its session's view, then pass it to the observers and the sink."""
        view = self.sessions.get(event.session_id)
        if view is not None:
            view.apply(event)
            if isinstance(event, ev.AgentSessionStale) and event.reason is None:
                self.scheduler.pump()  # its queued prompts may start now
                self.queue_changed(event.session_id)
        for observer in self.observers:
            observer(event)
        if self._sink is None:
            self._buffer.append(event)
        else:
            self._sink(event)

    def observe(self, sink: ev.EventSink) -> None:
        """Let ``sink`` see every event before the sink (a recorder, a fan-out group, the API server);
        observing twice is observing once. It must not block."""
        if sink not in self.observers:
            self.observers.append(sink)

    def unobserve(self, sink: ev.EventSink) -> None:
        """Stop passing events to ``sink`` (nothing when it does not observe)."""
        if sink in self.observers:
            self.observers.remove(sink)

    def notice(self, sid: str, text: str, level: Literal["info", "warning", "error"] = "info") -> None:
        """Show ``text`` as a notice in session ``sid``'s transcript (a ``Notice`` event)."""
        self.emit(ev.Notice(sid, text, level))

    # -- lookups --------------------------------------------------------------------------------------
    def view(self, sid: str) -> SessionView:
        """Return the open session ``sid``'s view. Raises SessionError when it is not open."""
        try:
            return self.sessions[sid]
        except KeyError:
            raise SessionError(f"no open session with id {sid}") from None

    def writable(self, sid: str) -> SessionView:
        """Return the open session ``sid``'s view for a command that changes the session. Raises
        SessionError when it is not open, or when another live process holds it (read-only here: one
        writer per session), naming that process and /takeover."""
        view = self.view(sid)
        if view.read_only:
            raise SessionError(view.read_only)
        return view

    def context_window(self, model: str) -> int:
        """Return ``model``'s context window (tokens) from the config."""
        return int(self.config.model_settings(model).context_window)

    def system_prompt(self, view: SessionView) -> str:
        """Return the session's system prompt (instructions and notes as they are now)."""
        return build_system_prompt(
            workdir=view.workdir,
            instructions=load_instructions(self.project_dir, view.workdir),
            notes=[note_line(n) for n in self.notebook.session_notes(view.id)],
            project_notes=[note_line(n) for n in self.notebook.project_notes(view.id)],
            decisions=self.team.decision_lines(),
        )

    # -- prompts --------------------------------------------------------------------------------------
    def submit(self, sid: str, text: str) -> str:
        """Queue ``text`` for the session (it starts when the session and a slot are free); return its id.
        Raises SessionError for a session held by another process (read-only here)."""
        view = self.view(sid)
        if view.read_only:
            raise SessionError(view.read_only)
        self.turn_done[sid].clear()
        if self._waits_for_agent(sid):
            self.emit(ev.Notice(sid, held_note(text), "warning"))
        return self.scheduler.submit(sid, text).id

    def _requeue_held(self, sid: str, text: str) -> None:
        """Put a prompt still queued when paragents stopped back into the queue, held (not sent)."""
        self.scheduler.submit(sid, text, held=True)

    def cancel(self, sid: str) -> bool:
        """Cancel the session's running turn (stops the stream and kills a running command)."""
        return self.scheduler.cancel(sid)

    async def wait_idle(self, sid: str | None = None) -> None:
        """Wait until ``sid`` (or every session) has no running turn and no queued prompt."""
        if sid is None:
            await self.scheduler.wait_idle()
        else:
            await self.turn_done[sid].wait()

    def _held(self, sid: str) -> bool:
        """A session whose prompts wait in its queue: every session while ``holding_new_turns`` is on
        (a quit being confirmed), or one whose external agent cannot continue the stored conversation
        until the user starts a new agent session (``AgentSessionStale``)."""
        return self.holding_new_turns or self._waits_for_agent(sid)

    def _waits_for_agent(self, sid: str) -> bool:
        """The session's external agent cannot continue its conversation until a new agent session."""
        view = self.sessions.get(sid)
        return view is not None and view.agent_stale is not None

    def queue_changed(self, sid: str) -> None:
        view = self.sessions.get(sid)
        if view is None:
            return
        queue = self.scheduler.queue(sid)
        running = self.scheduler.is_running(sid)
        waiting = [p for p in queue if not p.held]  # held ones wait for the user, not for a slot
        self.drafts.queue_changed(sid, [p.text for p in queue if p.resume is None])
        if not running and waiting and self._waits_for_agent(sid):
            if view.waiting_on != WAITING_ON:
                self.emit(ev.SessionStateChanged(sid, SessionState.WAITING, "", WAITING_ON))
        elif not running and waiting and view.state is not SessionState.QUEUED and not self._starts_now(sid):
            self.emit(ev.SessionStateChanged(sid, SessionState.QUEUED, self._queued_because()))
        held = tuple(p.id for p in queue if p.held)
        self.emit(ev.QueueChanged(sid, tuple((p.id, p.text) for p in queue), held))
        if not running and not waiting:
            done = self.turn_done.get(sid)
            if done:
                done.set()

    def _starts_now(self, sid: str) -> bool:
        """A prompt of ``sid`` that waits now starts right away (a slot is free, nothing holds it)."""
        return self.scheduler.running_count < self.scheduler.max_parallel and not self._held(sid)

    def _queued_because(self) -> str:
        """Why a session's prompt waits for its turn (the panel title says it)."""
        if self.holding_new_turns:
            return "held while a quit waits for confirmation"
        running, cap = self.scheduler.running_count, self.scheduler.max_parallel
        return f"waiting for a turn slot: {running} running, max_parallel_turns = {cap}"

    async def _run_prompt(self, sid: str, prompt: QueuedPrompt) -> None:
        """Run one queued prompt (the scheduler's task): never raises but CancelledError, so no turn
        task ends with an exception nobody retrieves; a store that cannot be written fails the turn
        with ``error_kind`` "store" (the agent reports it, or this does when it fails before)."""
        await self.loaded_event.wait()  # a prompt typed while restored sessions load waits for them
        agent = self.agents.get(sid)
        view = self.sessions.get(sid)
        if agent is None or view is None:
            return
        before = view.last_result
        try:
            await self.store.sessions.update(sid, state=SessionState.RUNNING.value, pid=os.getpid())
            await self.notebook.refresh(sid)  # project notes other sessions wrote meanwhile
            await self.team.refresh()  # decisions recorded meanwhile (any process)
            await agent.before_turn(prompt.text)  # may send it back to its queue (PromptHeld)
            if prompt.resume is not None:  # continue a turn a crash left at an approval
                await agent.run_turn(prompt.text, prompt.resume)
            else:  # notes other sessions sent arrive as context of this turn
                await agent.run_turn(await self.team.deliver(sid, prompt.text))  # sets view.last_result
        except asyncio.CancelledError:
            if view.last_result is before:  # cancelled before the agent's turn ended it
                result = TurnResult(status=TurnStatus.CANCELLED)
                view.apply(ev.TurnFinished(sid, "cancelled", None, None, result))
        except PromptHeld:  # not started: the scheduler puts it back at the head of its queue
            raise
        except StoreError as exc:  # before the agent's turn began
            self.emit(ev.TurnStarted(sid, prompt.text))
            await agent.record.fail_on_store(exc)
        except Exception as exc:  # a bug: report it on the turn rather than lose it in the task
            log.exception("turn of session %s failed", sid)
            text = f"internal error: {type(exc).__name__}: {exc}"
            try:  # the turn row is finished too, and the panel is told the session failed
                await agent.record.fail_internal(text)
            except StoreError:
                result = TurnResult(status=TurnStatus.FAILED, error=text, error_kind="internal")
                self.emit(ev.SessionStateChanged(sid, SessionState.FAILED, text))
                self.emit(ev.TurnFinished(sid, TurnStatus.FAILED.value, text, "internal", result))
        finally:
            try:
                await agent.compactions.run_pending()  # asked with /compact during the turn
                await self.conflicts.release(sid)
                if sid in self.sessions:
                    await self.store.sessions.update(
                        sid, state=view.state.value, last_prompt_tokens=view.context_tokens
                    )
            except StoreError as exc:
                self.emit(ev.Notice(sid, f"after the turn: {exc}", "error"))

    # -- conflicts ------------------------------------------------------------------------------------
    def _set_waiting(self, sid: str, what: str | None) -> None:
        """Mark a session as holding a call on a conflict (``what`` it waits on) or running again (None)."""
        view = self.sessions.get(sid)
        if view is None:
            return
        if what:
            self.emit(ev.SessionStateChanged(sid, SessionState.WAITING, f"waiting on {what}", what))
        elif view.state is SessionState.WAITING:
            self.emit(ev.SessionStateChanged(sid, SessionState.RUNNING, ""))
        else:
            view.apply(ev.SessionStateChanged(sid, view.state, ""))  # clears waiting_on quietly

    def _summarize_call(self, call: ToolCall, args: dict[str, Any]) -> str:
        tool = self.tools.get(call.name)
        return tool.summarize(args) if tool is not None else call.name


__all__ = ["SessionsCore", "Usage"]
