"""Opening sessions: a session's view from its record, its conversation and agent, and the two-phase
restore of the sessions open last time (the TUI shows panels before histories), which clients drive
through the opening facet (:class:`Opening`). Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path
from typing import Any, Protocol

from paragents import events as ev
from paragents.agent import Agent
from paragents.agent.compaction import load_compaction
from paragents.models import SessionState
from paragents.sessions import acp as acp_sessions
from paragents.sessions import approvals, lanes
from paragents.sessions.core import SessionsCore
from paragents.sessions.holds import BUSY_STATES, SessionHolds
from paragents.sessions.tool_rows import with_tool_rows
from paragents.sessions.view import SessionView

ENDINGS = {
    "failed": ("Turn failed: {error}", "error"),
    "cancelled": ("Turn cancelled.", "warning"),
    "interrupted": ("Turn interrupted: paragents stopped before it finished.", "warning"),
}
"""How a restored transcript says a past turn ended (completed turns say nothing)."""


def turn_notes(stored: list[Any], turns: list[Any], before: int = 0) -> tuple[tuple[int, str, str], ...]:
    """The notes saying how past turns of ``stored`` (a conversation's messages) ended when they did
    not complete: each after the last message of its turn (``before``: messages shown above them)."""
    last: dict[int, int] = {}
    for index, message in enumerate(stored):
        if message.turn_id is not None:
            last[message.turn_id] = index
    notes = []
    for turn in turns:
        ending = ENDINGS.get(turn.status)
        if ending is not None and turn.id in last:
            text = ending[0].format(error=turn.error or "unknown error")
            if turn.status == "cancelled" and (turn.error or "").startswith("stopped at"):
                text = f"Turn cancelled: {turn.error}"  # the user's Stop at a budget/loop-guard pause
            notes.append((before + last[turn.id] + 1, text, ending[1]))
    return tuple(sorted(notes))


class Opening(Protocol):
    """Restoring the sessions open last time, as clients drive it (``runtime.opening``)."""

    async def restore(self) -> list[SessionView]: ...
    async def restore_views(self) -> list[SessionView]: ...
    async def load_restored(self) -> list[SessionView]: ...
    async def wait_loaded(self) -> None: ...


class SessionOpening:
    """Registers views, loads their conversations and builds their agents (see the module docstring);
    the :class:`Opening` facet."""

    def __init__(self, core: SessionsCore, holds: SessionHolds) -> None:
        self.core = core
        self.holds = holds

    async def open_view(self, rec: Any, loaded: tuple[list[Any], list[Any]] | None = None) -> SessionView:
        """Register, hold and load the session of store record ``rec``; return its view."""
        view = self.register_view(rec)
        await lanes.attach_restored(self.core, [view])
        await self.holds.hold(view, rec)
        await self.load_view(view, loaded)
        return view

    def register_view(self, rec: Any) -> SessionView:
        """Make the session's view from its record (no messages yet) and register it."""
        core = self.core
        state = SessionState(rec.state) if rec.state in SessionState._value2member_map_ else SessionState.IDLE
        view = SessionView(
            id=rec.id,
            name=rec.name,
            model=rec.model,
            mode=rec.mode,
            workdir=Path(rec.workdir),
            state=SessionState.INTERRUPTED if state in BUSY_STATES else state,
            usage=rec.usage,
            context_tokens=rec.last_prompt_tokens,
            context_window=core.context_window(rec.model),
            session_rules=list(rec.session_rules),
        )
        core.sessions[rec.id] = view
        core.turn_done[rec.id] = asyncio.Event()
        core.turn_done[rec.id].set()
        return view

    async def load_view(
        self,
        view: SessionView,
        loaded: tuple[list[Any], list[Any]] | None = None,
        mark: tuple[int, int] | None = None,
    ) -> None:
        """Read the session's conversation into ``view.messages`` and build its agent. ``loaded`` is
        ``store.messages.load_for_display_and_history(view.id)`` when the caller already read it, and then
        ``mark`` the ``store.messages.history_mark(view.id)`` read before it (the revision the copy is at)."""
        core = self.core
        sid = view.id
        revision, _newest = mark or await core.store.messages.history_mark(
            sid
        )  # before reading: conservative
        stored_messages, history = loaded or await core.store.messages.load_for_display_and_history(sid)
        shown = tuple(  # each tool call as it was shown while it ran (sessions/tool_rows.py)
            with_tool_rows(
                [stored.for_display() for stored in stored_messages],
                [stored.id for stored in stored_messages],
                await core.store.tool_rows.all(sid),
            )
        )
        ended = await core.store.turns.all(sid, tuple(ENDINGS))  # the few that did not complete
        notes = turn_notes(stored_messages, ended, len(view.messages))
        view.apply(ev.ConversationLoaded(sid, (*view.messages, *shown), notes=notes))
        await core.budgets.load(view)  # its spend so far and its stored /budget session
        agent = Agent(
            session=view,
            client=core.client,
            tools=core.tools,
            policy=core.policy,
            store=core.store,
            config=core.config,
            emit=core.emit,
            system_prompt=functools.partial(core.system_prompt, view),
            history=history,
            preflight=core.conflicts.preflight,
            on_read=core.conflicts.read_hook(sid),
            on_write=core.conflicts.write_hook(sid),
            budget=core.budgets.meter(sid),
            mcp=core.mcp_pool.for_session(sid),
            execution=lambda: core.remote.facet(sid),
        )
        core.agents[sid] = agent
        record = agent.record
        record.compaction = await load_compaction(core.store, sid, history)
        record.revision = revision
        record.last_message_id = max((m.id for m in stored_messages), default=0)
        await core.notebook.refresh(sid)
        await core.drafts.restore(view)  # what was typed but not sent goes back into its prompt box
        await acp_sessions.attach_if_agent(core, view)  # a session run by an external ACP agent
        await approvals.resume_orphans(core, view)  # an ask a crash left pending is asked again

    async def restore(self) -> list[SessionView]:
        """Open the sessions that were open last time in this project (in panel order); return them
        (:meth:`restore_views` then :meth:`load_restored`)."""
        await self.restore_views()
        await self.load_restored()
        return list(self.core.sessions.values())

    async def restore_views(self) -> list[SessionView]:
        """First half of :meth:`restore` (the TUI shows its panels after it): register the views of the
        sessions open last time, in panel order, without their messages (``view.messages`` stays empty
        until :meth:`load_restored`). Prompts submitted meanwhile wait for the load. Returns every view."""
        core = self.core
        for rec in await core.store.sessions.all(core.project_dir, open_only=True):
            if rec.id not in core.sessions:
                view = self.register_view(rec)
                if not await self.holds.hold(view, rec):
                    core.notes.append(str(view.read_only))  # the panel says it once loaded
                core.unloaded.append(rec.id)
        await lanes.attach_restored(core, list(core.sessions.values()), startup=True)
        if core.unloaded:
            core.loaded_event.clear()
        return list(core.sessions.values())

    async def load_restored(self) -> list[SessionView]:
        """Second half of :meth:`restore`: read the conversations of the views :meth:`restore_views`
        registered and build their agents; return those views (closed meanwhile: left out). Raises
        StoreError when the store cannot be read (prompts then find no agent and do nothing)."""
        core = self.core
        sids, core.unloaded = core.unloaded, []
        try:
            # Read every conversation at once: the store's thread fetches one while this loop parses another.
            marks = await asyncio.gather(*(core.store.messages.history_mark(sid) for sid in sids))
            loaded = await asyncio.gather(
                *(core.store.messages.load_for_display_and_history(sid) for sid in sids)
            )
            views = []
            for sid, pair, mark in zip(sids, loaded, marks, strict=True):
                view = core.sessions.get(sid)
                if view is not None:
                    await self.load_view(view, pair, mark)
                    views.append(view)
                    if view.read_only:  # after its panel exists (the TUI mounts panels before this)
                        core.emit(ev.Notice(view.id, view.read_only, "warning"))
            return views
        finally:
            core.loaded_event.set()

    async def wait_loaded(self) -> None:
        """Return once every registered session has its messages and agent (see :meth:`restore_views`)."""
        await self.core.loaded_event.wait()
