"""The Runtime's one-writer-per-session part: holding the sessions it opens (``Store.acquire_session``),
renewing the holds, turning a session another process took over read-only, and taking one over when
the user confirms. Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from paragents import events as ev
from paragents.models import SessionState
from paragents.session_view import SessionView

log = logging.getLogger(__name__)


class SessionHolds:
    """Mixin of :class:`paragents.runtime.Runtime`: the sessions this process is the one writer of."""

    sessions: dict[str, SessionView]
    agents: dict[str, Any]
    store: Any
    scheduler: Any
    notes: list[str]
    holds: set[str]
    _heartbeat: asyncio.Task[None] | None
    _loaded: asyncio.Event

    def emit(self, event: Any) -> None:  # pragma: no cover - Runtime overrides it
        raise NotImplementedError

    def _view(self, sid: str) -> SessionView:  # pragma: no cover - Runtime overrides it
        raise NotImplementedError

    async def _hold(self, view: SessionView, rec: Any = None, *, take_over: bool = False) -> bool:
        """Make this process the session's one writer (see ``Store.acquire_session``). When another
        live process holds it, the view becomes read-only (``view.read_only`` says why and how to
        take over) and False is returned. A holder that is gone is taken over with a note."""
        from paragents.store import SessionHeld

        try:
            previous = await self.store.acquire_session(view.id, take_over=take_over)
        except SessionHeld as exc:
            view.read_only = (
                f"{exc}: shown read-only here; /takeover takes it over (only when that process is "
                "gone or you are sure)"
            )
            if rec is not None and rec.state in SessionState._value2member_map_:
                view.state = SessionState(rec.state)  # the holder's state, not ours
            return False
        view.read_only = None
        self.holds.add(view.id)
        self._ensure_heartbeat()
        if previous is not None:
            why = "at your request" if take_over else "its process is gone"
            self.notes.append(f"session {view.name!r}: taken over from {previous.describe()} ({why})")
        return True

    def _ensure_heartbeat(self) -> None:
        """Start renewing this process's holds (once), while it holds sessions."""
        if self._heartbeat is None or self._heartbeat.done():
            self._heartbeat = asyncio.get_running_loop().create_task(self._beat(), name="session-holds")

    async def _beat(self) -> None:
        from paragents.store import StoreError
        from paragents.store.holders import HEARTBEAT_INTERVAL

        while True:
            await asyncio.sleep(HEARTBEAT_INTERVAL)
            try:
                await self.check_holds()
            except StoreError:
                continue  # a busy store: the next beat tries again
            except Exception:
                log.exception("renewing the session holds failed")

    async def check_holds(self) -> list[str]:
        """Renew this process's holds; a session another process took over becomes read-only here
        (its running turn is cancelled, with a Notice). Returns the ids of the sessions lost."""
        lost = await self.store.renew_holds(sorted(self.holds))
        for sid in lost:
            self.holds.discard(sid)
            view = self.sessions.get(sid)
            if view is None:
                continue
            view.read_only = (
                f"session {view.name!r} was taken over by another process: shown read-only here; "
                "/takeover takes it back"
            )
            self.scheduler.cancel(sid)
            self.emit(ev.Notice(sid, view.read_only, "error"))
        return lost

    async def take_over(self, sid: str) -> SessionView:
        """Take the session over from the process holding it (the user confirmed): this process
        becomes its writer and reloads its history (what the other process wrote is kept)."""
        view = self._view(sid)
        if not view.read_only:
            return view
        await self._loaded.wait()
        await self._hold(view, take_over=True)
        if view.state in (SessionState.RUNNING, SessionState.QUEUED, SessionState.WAITING):
            view.state = SessionState.IDLE
        agent = self.agents.get(sid)
        if agent is not None:
            await agent.sync()
        note = self.notes[-1] if self.notes else f"session {view.name!r} taken over"
        self.emit(ev.SessionStateChanged(sid, view.state, "taken over"))
        self.emit(ev.Notice(sid, note, "warning"))
        return view
