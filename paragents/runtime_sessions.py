"""The Runtime's session opening: a session's view from its record, its conversation and agent, and the
two-phase restore of the sessions open last time (the TUI shows panels before histories).
Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path
from typing import Any

from paragents.agent import Agent
from paragents.compaction import load_compaction
from paragents.events import Notice
from paragents.models import SessionState
from paragents.session_view import SessionView


class SessionOpening:
    """Mixin of :class:`paragents.runtime.Runtime`: opening and restoring sessions."""

    sessions: dict[str, SessionView]
    agents: dict[str, Agent]
    turn_done: dict[str, asyncio.Event]
    store: Any
    client: Any
    tools: Any
    policy: Any
    config: Any
    conflicts: Any
    notebook: Any
    project_dir: Path
    _unloaded: list[str]
    _loaded: asyncio.Event

    def _context_window(self, model: str) -> int:  # pragma: no cover - Runtime overrides it
        raise NotImplementedError

    def _system_prompt(self, view: SessionView) -> str:  # pragma: no cover - Runtime overrides it
        raise NotImplementedError

    def emit(self, event: Any) -> None:  # pragma: no cover - Runtime overrides it
        raise NotImplementedError

    notes: list[str]

    _hold: Any
    """``SessionHolds._hold`` (the Runtime's other mixin): make this process the session's writer."""

    async def _open_view(self, rec: Any, loaded: tuple[list[Any], list[Any]] | None = None) -> SessionView:
        view = self._register_view(rec)
        await self._hold(view, rec)
        await self._load_view(view, loaded)
        return view

    def _register_view(self, rec: Any) -> SessionView:
        """Make the session's view from its record (no messages yet) and register it."""
        view = SessionView(
            id=rec.id,
            name=rec.name,
            model=rec.model,
            mode=rec.mode,
            workdir=Path(rec.workdir),
            state=SessionState(rec.state)
            if rec.state in SessionState._value2member_map_
            else SessionState.IDLE,
            usage=rec.usage,
            context_tokens=rec.last_prompt_tokens,
            context_window=self._context_window(rec.model),
            session_rules=list(rec.session_rules),
        )
        if view.state in (SessionState.RUNNING, SessionState.QUEUED, SessionState.WAITING):
            view.state = SessionState.INTERRUPTED
        self.sessions[rec.id] = view
        self.turn_done[rec.id] = asyncio.Event()
        self.turn_done[rec.id].set()
        return view

    async def _load_view(
        self,
        view: SessionView,
        loaded: tuple[list[Any], list[Any]] | None = None,
        mark: tuple[int, int] | None = None,
    ) -> None:
        """Read the session's conversation into ``view.messages`` and build its agent. ``loaded`` is
        ``store.load_for_display_and_history(view.id)`` when the caller already read it, and then
        ``mark`` the ``store.history_mark(view.id)`` read before it (the revision the copy is at)."""
        sid = view.id
        revision, _newest = mark or await self.store.history_mark(sid)  # before reading: conservative
        stored_messages, history = loaded or await self.store.load_for_display_and_history(sid)
        view.messages.extend(stored.for_display() for stored in stored_messages)
        self.agents[sid] = Agent(
            session=view,
            client=self.client,
            tools=self.tools,
            policy=self.policy,
            store=self.store,
            config=self.config,
            emit=self.emit,
            system_prompt=functools.partial(self._system_prompt, view),
            history=history,
            preflight=self.conflicts.preflight,
            on_read=self.conflicts.read_hook(sid),
            on_write=self.conflicts.write_hook(sid),
        )
        agent = self.agents[sid]
        agent.compaction = await load_compaction(self.store, sid, history)
        agent.revision = revision
        agent.last_message_id = max((m.id for m in stored_messages), default=0)
        await self.notebook.refresh(sid)

    async def restore(self) -> list[SessionView]:
        """Open the sessions that were open last time in this project (in panel order); return them
        (:meth:`restore_views` then :meth:`load_restored`)."""
        await self.restore_views()
        await self.load_restored()
        return list(self.sessions.values())

    async def restore_views(self) -> list[SessionView]:
        """First half of :meth:`restore` (the TUI shows its panels after it): register the views of the
        sessions open last time, in panel order, without their messages (``view.messages`` stays empty
        until :meth:`load_restored`). Prompts submitted meanwhile wait for the load. Returns every view."""
        for rec in await self.store.list_sessions(self.project_dir, open_only=True):
            if rec.id not in self.sessions:
                view = self._register_view(rec)
                if not await self._hold(view, rec):
                    self.notes.append(str(view.read_only))  # the panel says it once loaded
                self._unloaded.append(rec.id)
        if self._unloaded:
            self._loaded.clear()
        return list(self.sessions.values())

    async def load_restored(self) -> list[SessionView]:
        """Second half of :meth:`restore`: read the conversations of the views :meth:`restore_views`
        registered and build their agents; return those views (closed meanwhile: left out). Raises
        StoreError when the store cannot be read (prompts then find no agent and do nothing)."""
        sids, self._unloaded = self._unloaded, []
        try:
            # Read every conversation at once: the store's thread fetches one while this loop parses another.
            marks = await asyncio.gather(*(self.store.history_mark(sid) for sid in sids))
            loaded = await asyncio.gather(*(self.store.load_for_display_and_history(sid) for sid in sids))
            views = []
            for sid, pair, mark in zip(sids, loaded, marks, strict=True):
                view = self.sessions.get(sid)
                if view is not None:
                    await self._load_view(view, pair, mark)
                    views.append(view)
                    if view.read_only:  # after its panel exists (the TUI mounts panels before this)
                        self.emit(Notice(view.id, view.read_only, "warning"))
            return views
        finally:
            self._loaded.set()

    async def wait_loaded(self) -> None:
        """Return once every registered session has its messages and agent (see :meth:`restore_views`)."""
        await self._loaded.wait()
