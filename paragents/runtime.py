"""The runtime: the one facade every client (TUI, ``paragents run``, replay, demo) drives.

It owns the config, the store, the policy, the chat client, the scheduler and one ``Agent`` per open
session. Clients call its methods ("attributes down") and receive every core event through the one
sink set with :meth:`Runtime.set_sink` ("messages up"). Nothing here imports Textual.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
from collections.abc import Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from paragents import events as ev
from paragents.agent import Agent, TurnResult
from paragents.config import ConfigError, LoadedConfig, describe_config, load_config
from paragents.conflicts import UNATTENDED_WAIT, ConflictChecker
from paragents.memory import NoteBook, build_system_prompt, load_instructions, note_line
from paragents.models import SessionState, TurnStatus, Usage
from paragents.runtime_holds import SessionHolds
from paragents.runtime_memory import MemoryCommands
from paragents.runtime_sessions import SessionOpening
from paragents.scheduler import QueuedPrompt, Scheduler
from paragents.session_view import SessionError, SessionView

log = logging.getLogger(__name__)

PERMISSION_MODES = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")
SANDBOX_MODES = ("off", "auto", "required")
_NAME_RE = re.compile(r"^[^\s\x00-\x1f\x7f!-,/:-@\[-^`{-~\u202a-\u202e\u2066-\u2069]{1,40}$")
"""Session names: 1-40 characters, no whitespace, control characters or ASCII punctuation other than
'.', '_' and '-' (letters of any script, digits and emoji are fine)."""
_NAME_HELP = "use 1-40 letters, digits, emoji, '.', '_' or '-' (no spaces)"

ACTIVE_RECORDER: ContextVar[Any] = ContextVar("paragents_active_recorder", default=None)
"""The recorder :meth:`Runtime.create` attaches when none is passed (set by ``--record FILE``; see
``paragents.cassette.recorder.Recorder``): an object with ``on_response(record)`` (the ChatClient
recorder callback) and ``attach(runtime)`` (called once the runtime exists)."""


class Runtime(SessionOpening, SessionHolds, MemoryCommands):
    """Facade over the engine for one project directory. Build it with :meth:`create`."""

    def __init__(self, project_dir: Path, loaded: LoadedConfig, store: Any, policy: Any, client: Any) -> None:
        from paragents.tools.registry import default_registry

        self.project_dir = project_dir
        self.loaded = loaded
        self.store = store
        self.policy = policy
        self.client = client
        self.tools = default_registry()
        self.notebook = NoteBook(store, project_dir)
        self._register_memory_tools()
        self.sessions: dict[str, SessionView] = {}
        self.agents: dict[str, Agent] = {}
        self.notes: list[str] = []
        """Recovery notes of the start (interrupted turns repaired, reservations released, sessions
        taken over or held elsewhere): the TUI notifies them, ``paragents run`` prints them."""
        self.holds: set[str] = set()
        """Ids of the sessions this process holds (is the one writer of); see ``Store.acquire_session``."""
        self._heartbeat: asyncio.Task[None] | None = None
        self._sink: ev.EventSink | None = None
        self._buffer: list[ev.Event] = []
        self.observers: list[ev.EventSink] = []
        """Extra sinks that see every event before the sink (recorders, replay); they must not block."""
        self.recorder: Any = None
        self.cli_overrides: dict[str, Any] = {}
        """Config values given on the command line; they stay on top when the config is reloaded."""
        self.env: Mapping[str, str] | None = None
        """The environment the config was read with (None: ``os.environ``)."""
        self.scheduler = Scheduler(loaded.config.max_parallel_turns, self._run_prompt, self._queue_changed)
        self.turn_done: dict[str, asyncio.Event] = {}
        self._unloaded: list[str] = []
        self._loaded = asyncio.Event()
        self._loaded.set()
        self.conflicts = ConflictChecker(
            store,
            emit=self.emit,
            session_name=lambda sid: self.sessions[sid].name if sid in self.sessions else None,
            turn_of=lambda sid: self.agents[sid].turn_id if sid in self.agents else None,
            workdir_of=lambda sid: self.sessions[sid].workdir if sid in self.sessions else project_dir,
            set_waiting=self._set_waiting,
            summarize=self._summarize_call,
            resources=loaded.config.resources,
        )
        """The preflight conflict checker shared by every session's agent (paragents.conflicts)."""

    # -- construction --------------------------------------------------------------------------------
    @classmethod
    async def create(
        cls,
        project_dir: Path,
        *,
        cli_overrides: Mapping[str, Any] | None = None,
        db_path: Path | None = None,
        cli_rules: dict[str, list[str]] | None = None,
        env: Mapping[str, str] | None = None,
        client: Any = None,
        recorder: Any = None,
    ) -> Runtime:
        """Load config and policy for ``project_dir``, open the store, build the chat client.

        ``cli_overrides`` are config values from the command line; ``cli_rules`` permission rules from
        ``--allow/--ask/--deny``. Raises ConfigError (bad config or missing key env var) or
        PolicyError (unreadable permission files: the runtime fails closed). ``recorder`` (default:
        :data:`ACTIVE_RECORDER`) receives every raw response and is attached to the runtime."""
        from paragents import paths
        from paragents.permissions import Policy
        from paragents.store import Store

        project_dir = project_dir.resolve()
        loaded = load_config(project_dir, cli_overrides, env)
        policy = Policy.load(project_dir, cli_rules=cli_rules)
        cfg = loaded.config
        recorder = recorder if recorder is not None else ACTIVE_RECORDER.get()
        if client is None:
            client = make_client(cfg, recorder, env)
        store = await Store.open(db_path or paths.db_path())
        runtime = cls(project_dir, loaded, store, policy, client)
        runtime.cli_overrides = dict(cli_overrides or {})
        runtime.env = env
        if recorder is not None:
            runtime.recorder = recorder
            recorder.attach(runtime)
        if store.recovery_note:
            runtime.notes.append(store.recovery_note)
        dead_note = await runtime.conflicts.release_dead()
        if dead_note:
            runtime.notes.append(dead_note)
        if not _stdin_is_terminal():
            runtime.conflicts.unattended_wait = UNATTENDED_WAIT
        runtime.notes.extend(await store.recover_interrupted(os.getpid()))
        return runtime

    @property
    def config(self) -> Any:
        """The effective ``RuntimeConfig``."""
        return self.loaded.config

    def set_sink(self, sink: ev.EventSink) -> None:
        """Set the one callable that receives every core event (events before this are replayed)."""
        self._sink = sink
        buffered, self._buffer = self._buffer, []
        for event in buffered:
            sink(event)

    def emit(self, event: ev.Event) -> None:
        """Update session views from ``event`` and pass it to the sink."""
        view = self.sessions.get(event.session_id)
        if view is not None:
            if isinstance(event, ev.PermissionRequested):
                view.pending[event.request_id] = event
            elif isinstance(event, ev.PermissionResolved):
                view.pending.pop(event.request_id, None)
            elif isinstance(event, ev.ConflictDetected):
                view.conflicts[event.conflict_id] = event
            elif isinstance(event, ev.ConflictResolved):
                view.conflicts.pop(event.conflict_id, None)
            elif isinstance(event, ev.MessageAdded):
                view.messages.append(event.message)
        for observer in self.observers:
            observer(event)
        if self._sink is None:
            self._buffer.append(event)
        else:
            self._sink(event)

    # -- sessions ------------------------------------------------------------------------------------
    def _context_window(self, model: str) -> int:
        return int(self.config.model_settings(model).context_window)

    def _system_prompt(self, view: SessionView) -> str:
        return build_system_prompt(
            workdir=view.workdir,
            instructions=load_instructions(self.project_dir, view.workdir),
            notes=[note_line(n) for n in self.notebook.session_notes(view.id)],
            project_notes=[note_line(n) for n in self.notebook.project_notes(view.id)],
        )

    def _unique_name(self, base: str, taken: set[str]) -> str:
        if base not in taken:
            return base
        n = 2
        while f"{base}-{n}" in taken:
            n += 1
        return f"{base}-{n}"

    async def new_session(
        self,
        name: str | None = None,
        *,
        model: str | None = None,
        workdir: Path | None = None,
        mode: str | None = None,
        open_panel: bool = True,
    ) -> SessionView:
        """Create, persist and open a new session; return its view (``open_panel``: shown in the TUI).

        Raises SessionError for a bad name, an unknown mode or a workdir that is not a directory."""
        if not (model or self.config.model):
            raise SessionError("no model is configured: run /setup, or give one with /new --model NAME")
        taken = {r.name for r in await self.store.list_sessions(self.project_dir)}
        if name is not None and not _NAME_RE.match(name):
            raise SessionError(f"bad session name {name!r}: {_NAME_HELP}")
        if name is not None and name in taken:
            raise SessionError(f"a session named {name!r} already exists in this project (see /sessions)")
        name = name or self._unique_name(f"s{len(taken) + 1}", taken)
        wd = (workdir or self.project_dir).expanduser()
        if not wd.is_absolute():
            wd = (self.project_dir / wd).resolve()
        if not wd.is_dir():
            raise SessionError(f"--dir {wd} is not a directory")
        mode = mode or getattr(self.policy, "default_mode", None) or "default"
        if mode not in PERMISSION_MODES:
            raise SessionError(f"unknown mode {mode!r}; use one of {', '.join(PERMISSION_MODES)}")
        rec = await self.store.create_session(
            name=name, project_dir=self.project_dir, workdir=wd, model=model or self.config.model, mode=mode
        )
        if open_panel:
            await self.store.update_session(rec.id, is_open=True, position=len(self.sessions))
        else:  # headless sessions are not shown as TUI panels until reopened from /sessions
            await self.store.update_session(rec.id, is_open=False)
        view = await self._open_view(await self.store.get_session(rec.id))
        self.emit(ev.SessionStateChanged(view.id, view.state, "created"))
        return view

    def _view(self, sid: str) -> SessionView:
        try:
            return self.sessions[sid]
        except KeyError:
            raise SessionError(f"no open session with id {sid}") from None

    async def close_session(self, sid: str) -> None:
        """Cancel the session's turn, drop its queue and close its panel; it stays in history (and
        this process stops holding it)."""
        view = self._view(sid)
        await self.scheduler.drop(sid)
        if view.read_only:
            await self.store.update_session(sid, is_open=False)  # the holder's state stays
        else:
            await self.store.update_session(sid, is_open=False, state=SessionState.IDLE.value)
            await self.store.release_session(sid)
        self.holds.discard(sid)
        self.sessions.pop(sid, None)
        self.agents.pop(sid, None)
        self.turn_done.pop(sid, None)
        await self.conflicts.release(sid)
        self.conflicts.forget(sid)

    async def reopen_session(self, sid: str) -> SessionView:
        """Open a persisted session again (no-op when open); return its view. Raises SessionError."""
        if sid in self.sessions:
            return self.sessions[sid]
        rec = await self.store.get_session(sid)
        if rec is None:
            raise SessionError(f"no session with id {sid}")
        await self.store.update_session(sid, is_open=True, position=len(self.sessions))
        return await self._open_view(await self.store.get_session(sid))

    async def attach_session(
        self,
        name: str,
        *,
        model: str | None = None,
        workdir: Path | None = None,
        mode: str | None = None,
        take_over: bool = False,
    ) -> tuple[SessionView, bool]:
        """Open the session ``name`` of this project for a headless run, creating it when missing.

        Returns ``(view, created)``. An existing session keeps its history; ``model``/``mode`` given
        here apply to it from now on. Does not change which sessions the TUI shows. Raises
        ``SessionHeld`` when another live process holds the session, unless ``take_over``."""
        rec = await self.store.find_session(self.project_dir, name)
        if rec is None:
            view = await self.new_session(name, model=model, workdir=workdir, mode=mode, open_panel=False)
            return view, True
        previous = await self.store.acquire_session(rec.id, take_over=take_over)  # raises SessionHeld
        if previous is not None:
            why = "as --take-over asked" if take_over else "its process is gone"
            self.notes.append(f"session {name!r}: taken over from {previous.describe()} ({why})")
        view = self.sessions.get(rec.id) or await self._open_view(rec)
        if model and model != view.model:
            await self.set_model(view.id, model)
        if mode and mode != view.mode:
            await self.set_mode(view.id, mode)
        return view, False

    async def rename_session(self, sid: str, name: str) -> None:
        """Rename a session. Raises SessionError on a bad or taken name."""
        view = self._view(sid)
        if not _NAME_RE.match(name):
            raise SessionError(f"bad session name {name!r}: {_NAME_HELP}")
        try:
            await self.store.update_session(sid, name=name)
        except Exception as exc:
            raise SessionError(str(exc)) from exc
        view.name = name
        self.emit(ev.SessionStateChanged(sid, view.state, f"renamed to {name}"))

    async def set_model(self, sid: str, model: str) -> None:
        """Use ``model`` for the session's next requests."""
        view = self._view(sid)
        await self.store.update_session(sid, model=model)
        view.model = model
        view.context_window = self._context_window(model)
        self.emit(ev.SessionStateChanged(sid, view.state, f"model {model}"))

    async def set_mode(self, sid: str, mode: str) -> None:
        """Set the session's permission mode. Raises SessionError for an unknown mode."""
        if mode not in PERMISSION_MODES:
            raise SessionError(f"unknown mode {mode!r}; use one of {', '.join(PERMISSION_MODES)}")
        view = self._view(sid)
        await self.store.update_session(sid, mode=mode)
        view.mode = mode
        self.emit(ev.SessionStateChanged(sid, view.state, f"mode {mode}"))

    def set_sandbox(self, sid: str, mode: str) -> None:
        """Set the session's sandbox mode (off/auto/required) until it is closed. Raises SessionError
        for an unknown mode."""
        if mode not in SANDBOX_MODES:
            raise SessionError(f"unknown sandbox mode {mode!r}; use one of {', '.join(SANDBOX_MODES)}")
        view = self._view(sid)
        view.sandbox_mode = mode
        self.emit(ev.SessionStateChanged(sid, view.state, f"sandbox {mode}"))

    def sandbox_report(self, sid: str) -> str:
        """Return the lines ``/sandbox`` shows for the session (mode, state, network, paths)."""
        from paragents.tools.sandbox import check, describe

        view = self._view(sid)
        agent = self.agents.get(sid)
        if agent is None:
            raise SessionError(f"session {view.name!r} is still loading; try again in a moment")
        sandbox = agent.sandbox_config()
        return describe(sandbox, check(sandbox), view.workdir)

    async def clear_session(self, sid: str) -> None:
        """Start a new conversation in the session (the old one stays in the store's history)."""
        await self._loaded.wait()
        view = self._view(sid)
        if self.scheduler.is_running(sid):
            raise SessionError("the session is running a turn: cancel it (Esc) before /clear")
        await self.store.new_conversation(sid)
        await self.store.update_session(sid, last_prompt_tokens=0)
        view.messages.clear()
        view.context_tokens = 0
        self.agents[sid].history.clear()
        self.agents[sid].compaction = None
        await self.agents[sid].mark_current()
        self.emit(ev.SessionStateChanged(sid, view.state, "cleared"))

    async def list_sessions(self) -> list[Any]:
        """Return every persisted session of the project (store ``SessionRecord``s)."""
        return list(await self.store.list_sessions(self.project_dir))

    async def find_session(self, name: str) -> Any:
        """Return the persisted session named ``name`` in this project, or None."""
        return await self.store.find_session(self.project_dir, name)

    # -- prompts --------------------------------------------------------------------------------------
    def submit(self, sid: str, text: str) -> str:
        """Queue ``text`` for the session (it starts when the session and a slot are free); return its id.
        Raises SessionError for a session held by another process (read-only here)."""
        view = self._view(sid)
        if view.read_only:
            raise SessionError(view.read_only)
        self.turn_done[sid].clear()
        prompt = self.scheduler.submit(sid, text)
        if self.scheduler.queue(sid) and any(p.id == prompt.id for p in self.scheduler.queue(sid)):
            pos = [p.id for p in self.scheduler.queue(sid)].index(prompt.id)
            self.emit(ev.PromptQueued(sid, prompt.id, text, pos))
        return prompt.id

    def edit_queued(self, sid: str, prompt_id: str, text: str) -> bool:
        """Change a queued prompt that has not started; False when it already started or is gone."""
        return self.scheduler.edit(sid, prompt_id, text)

    def remove_queued(self, sid: str, prompt_id: str) -> bool:
        """Remove a queued prompt that has not started; False when it already started or is gone."""
        return self.scheduler.remove(sid, prompt_id)

    def cancel(self, sid: str) -> bool:
        """Cancel the session's running turn (stops the stream and kills a running command)."""
        return self.scheduler.cancel(sid)

    async def wait_idle(self, sid: str | None = None) -> None:
        """Wait until ``sid`` (or every session) has no running turn and no queued prompt."""
        if sid is None:
            await self.scheduler.wait_idle()
        else:
            await self.turn_done[sid].wait()

    def _queue_changed(self, sid: str) -> None:
        view = self.sessions.get(sid)
        if view is None:
            return
        view.queue = self.scheduler.queue(sid)
        running = self.scheduler.is_running(sid)
        if not running and view.queue and view.state not in (SessionState.QUEUED,):
            view.state = SessionState.QUEUED
            self.emit(ev.SessionStateChanged(sid, view.state, "waiting for a free slot"))
        self.emit(ev.QueueChanged(sid, tuple((p.id, p.text) for p in view.queue)))
        if not running and not view.queue:
            done = self.turn_done.get(sid)
            if done:
                done.set()

    async def _run_prompt(self, sid: str, prompt: QueuedPrompt) -> None:
        """Run one queued prompt (the scheduler's task): never raises but CancelledError, so no turn
        task ends with an exception nobody retrieves; a store that cannot be written fails the turn
        with ``error_kind`` "store" (the agent reports it, or this does when it fails before)."""
        from paragents.store import StoreError

        await self._loaded.wait()  # a prompt typed while restored sessions load waits for them
        agent = self.agents.get(sid)
        view = self.sessions.get(sid)
        if agent is None or view is None:
            return
        try:
            await self.store.update_session(sid, state=SessionState.RUNNING.value, pid=os.getpid())
            await self.notebook.refresh(sid)  # project notes other sessions wrote meanwhile
            view.last_result = await agent.run_turn(prompt.text)
        except asyncio.CancelledError:
            view.last_result = TurnResult(status=TurnStatus.CANCELLED)
        except StoreError as exc:  # before the agent's turn began
            self.emit(ev.TurnStarted(sid, prompt.text))
            view.last_result = await agent._store_failed(exc, [], Usage())
        except Exception as exc:  # a bug: report it on the turn rather than lose it in the task
            log.exception("turn of session %s failed", sid)
            text = f"internal error: {type(exc).__name__}: {exc}"
            view.last_result = TurnResult(status=TurnStatus.FAILED, error=text, error_kind="internal")
            view.state = SessionState.FAILED
            self.emit(ev.TurnFinished(sid, TurnStatus.FAILED.value, text, "internal"))
        finally:
            try:
                await agent.run_pending_compactions()  # asked with /compact during the turn
                await self.conflicts.release(sid)
                if sid in self.sessions:
                    await self.store.update_session(
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
        view.waiting_on = what
        if what:
            view.state = SessionState.WAITING
            self.emit(ev.SessionStateChanged(sid, view.state, f"waiting on {what}"))
        elif view.state is SessionState.WAITING:
            view.state = SessionState.RUNNING
            self.emit(ev.SessionStateChanged(sid, view.state, ""))

    def _summarize_call(self, call: Any, args: dict[str, Any]) -> str:
        tool = self.tools.get(call.name)
        return tool.summarize(args) if tool is not None else call.name

    # -- config ---------------------------------------------------------------------------------------
    def config_rows(self) -> list[tuple[str, str, str]]:
        """Return ``(field, redacted value, source)`` rows of the effective config for /show-config."""
        return describe_config(self.loaded)

    async def reload_config(self) -> list[tuple[str, str, str]]:
        """Re-read the config files (after /setup, /reload) with the command line's values still on top,
        rebuild the chat client and apply the new values to open sessions. Returns ``(field, old, new)``
        for every value that changed (secrets redacted, as /show-config shows them). Raises ConfigError
        naming the file and field; the running config is then left as it was."""
        loaded = load_config(self.project_dir, self.cli_overrides, self.env)
        cfg = loaded.config
        client = make_client(cfg, self.recorder, self.env)
        before = {name: value for name, value, _source in describe_config(self.loaded, self.env)}
        old = self.client
        self.loaded = loaded
        self.client = client
        self.scheduler.max_parallel = cfg.max_parallel_turns
        for agent in self.agents.values():
            agent.client = client
            agent.config = cfg
        self.conflicts.resources = tuple(cfg.resources)
        for view in self.sessions.values():
            if not view.model:
                view.model = cfg.model
            view.context_window = self._context_window(view.model)
        await old.aclose()
        after = describe_config(loaded, self.env)
        return [
            (name, before.get(name, ""), value) for name, value, _src in after if before.get(name) != value
        ]

    async def shutdown(self) -> None:
        """Cancel running turns, mark open sessions idle, give up the sessions held, close the client
        and the store. A store that cannot be written does not stop it (a failing store fails fast)."""
        from paragents.store import StoreError

        await self.scheduler.shutdown()
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            await asyncio.gather(self._heartbeat, return_exceptions=True)
            self._heartbeat = None
        for sid, view in list(self.sessions.items()):
            if view.read_only:
                continue  # another process holds it: its state is not ours to write
            if view.state in (SessionState.RUNNING, SessionState.QUEUED, SessionState.WAITING):
                view.state = SessionState.IDLE
            with contextlib.suppress(StoreError):
                await self.store.update_session(sid, state=view.state.value)
        for sid in list(self.holds):
            with contextlib.suppress(StoreError):
                await self.store.release_session(sid)
        self.holds.clear()
        await self.client.aclose()
        await self.store.close()


def make_client(cfg: Any, recorder: Any = None, env: Mapping[str, str] | None = None) -> Any:
    """Return the ``ChatClient`` for a ``RuntimeConfig`` (key resolved from ``env``), reporting raw
    responses to ``recorder.on_response`` when a recorder is given. Raises ConfigError (missing key
    env var)."""
    from paragents.llm import ChatClient

    return ChatClient(
        cfg.base_url,
        cfg.resolve_api_key(env),
        connect_timeout=cfg.connect_timeout,
        read_timeout=cfg.read_timeout,
        max_retries=cfg.max_retries,
        max_retry_wait=cfg.max_retry_wait,
        extra_headers=dict(cfg.extra_headers),
        recorder=recorder.on_response if recorder is not None else None,
    )


def _stdin_is_terminal() -> bool:
    """Return True when stdin is a terminal (someone can answer a conflict); False for pipes/closed."""
    try:
        return bool(os.isatty(0))
    except (OSError, ValueError):
        return False


__all__ = ["PERMISSION_MODES", "ConfigError", "Runtime", "SessionError", "SessionView"]
