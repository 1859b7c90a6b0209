"""One writer per session: holding the sessions this process opens (``store.holders.acquire``),
renewing the holds, turning a session another process took over read-only, and taking one over when
the user confirms. Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from paragents import events as ev
from paragents.models import SessionState
from paragents.sessions.core import SessionsCore
from paragents.sessions.follow import SessionFollow
from paragents.sessions.view import SessionView
from paragents.store import SessionHeld, StoreError
from paragents.store.holders import HEARTBEAT_INTERVAL

log = logging.getLogger(__name__)

BUSY_STATES = (
    SessionState.RUNNING, SessionState.QUEUED, SessionState.WAITING, SessionState.BUDGET, SessionState.PAUSED,
)  # fmt: skip
MAX_NAMED = 5
"""Sessions named in one "taken over" note (the others are counted)."""


class SessionHolds:
    """The sessions this process is the one writer of (``core.holds``) and the heartbeat renewing them."""

    def __init__(self, core: SessionsCore) -> None:
        self.core = core
        self._heartbeat: asyncio.Task[None] | None = None
        self.follow = SessionFollow(core)
        """The loop that keeps the views shown read-only up to what their holders write."""
        self._gone: dict[str, tuple[int, list[str], str]] = {}
        """Holder gone -> (index of its note in ``core.notes``, the sessions taken from it, the note)."""

    async def hold(self, view: SessionView, rec: Any = None, *, take_over: bool = False) -> bool:
        """Make this process the session's one writer (see ``store.holders.acquire``). When another
        live process holds it, the view becomes read-only (``view.read_only`` says why and how to
        take over) and False is returned. A holder that is gone is taken over with a note."""
        core = self.core
        try:
            previous = await core.store.holders.acquire(view.id, take_over=take_over)
        except SessionHeld as exc:
            reason = (
                f"{exc}: shown read-only here (it follows what that process writes); /takeover takes "
                "it over (only when that process is gone or you are sure)"
            )
            known = rec is not None and rec.state in SessionState._value2member_map_
            view.apply(ev.ReadOnlyChanged(view.id, reason, SessionState(rec.state) if known else None))
            self.follow.ensure()
            return False
        view.apply(ev.ReadOnlyChanged(view.id, None))
        self.follow.forget(view.id)
        core.holds.add(view.id)
        self._ensure_heartbeat()
        if previous is not None:
            if take_over:
                core.notes.append(
                    f"session {view.name!r}: taken over from {previous.describe()} (at your request)"
                )
            else:
                self._note_gone(view.name, previous.describe())
        return True

    def _note_gone(self, name: str, holder: str) -> None:
        """Say that ``name`` was taken over from ``holder``, a process that is gone: one note per such
        holder, naming every session taken from it (a restart after a crash takes many at once)."""
        notes = self.core.notes
        index, names, said = self._gone.get(holder, (-1, [], ""))
        if not (0 <= index < len(notes) and notes[index] == said):
            index, names = -1, []  # that note was taken (shown) meanwhile: start a new one
        names = [*names, name]
        shown = ", ".join(repr(n) for n in names[:MAX_NAMED])
        if len(names) > MAX_NAMED:
            shown += f" and {len(names) - MAX_NAMED} more"
        what = "session" if len(names) == 1 else f"{len(names)} sessions"
        text = f"{what} {shown}: taken over from {holder} (its process is gone)"
        if index >= 0:
            notes[index] = text
        else:
            index = len(notes)
            notes.append(text)
        self._gone[holder] = (index, names, text)

    def _ensure_heartbeat(self) -> None:
        """Start renewing this process's holds (once), while it holds sessions."""
        if self._heartbeat is None or self._heartbeat.done():
            self._heartbeat = asyncio.get_running_loop().create_task(self._beat(), name="session-holds")

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_INTERVAL)
            try:
                await self.check_holds()
            except StoreError:
                continue  # a busy store: the next beat tries again
            except Exception:
                log.exception("renewing the session holds failed")

    async def stop(self) -> None:
        """Stop renewing the holds and following the read-only sessions (at shutdown)."""
        await self.follow.stop()
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            await asyncio.gather(self._heartbeat, return_exceptions=True)
            self._heartbeat = None

    async def check_holds(self) -> list[str]:
        """Renew this process's holds; a session another process took over becomes read-only here
        (its running turn is cancelled, with a Notice). Returns the ids of the sessions lost."""
        core = self.core
        lost = await core.store.holders.renew(sorted(core.holds))
        for sid in lost:
            core.holds.discard(sid)
            view = core.sessions.get(sid)
            if view is None:
                continue
            reason = (
                f"session {view.name!r} was taken over by another process: shown read-only here (it "
                "follows what that process writes); /takeover takes it back"
            )
            core.emit(ev.ReadOnlyChanged(sid, reason))
            self.follow.ensure()
            core.scheduler.cancel(sid)
            core.emit(ev.Notice(sid, reason, "error"))
        return lost
