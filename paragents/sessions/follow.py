"""A session shown read-only follows its holder: what the process holding it writes (new messages,
the session's state, its token usage) reaches the view as the events that process emitted for it, and
the view says when that process is gone (the session is free to take with ``/takeover``).

One loop per process, running while a view is read-only: every :data:`FOLLOW_INTERVAL` seconds one
``PRAGMA data_version`` read (``store.changes``) says whether another process committed anything;
only then are the read-only sessions' rows read (``store.sessions``, ``store.messages.load_after``,
``store.holders.live``, and the usage rows when the totals moved), plus once every
:data:`RECHECK_INTERVAL` seconds for a holder that died without a word. It only reads: the holder
stays the one writer of the session. Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paragents import events as ev
from paragents.agent.spend import priced
from paragents.models import SessionState
from paragents.sessions.core import SessionsCore
from paragents.sessions.view import SessionView
from paragents.store import StoreError
from paragents.store.holders import HEARTBEAT_INTERVAL

if TYPE_CHECKING:
    from paragents.agent.turn import TurnRecord

log = logging.getLogger(__name__)

FOLLOW_INTERVAL = 0.25
"""Seconds between two checks whether another process wrote to the store (what the holder writes
shows within this plus the time its rows take to read)."""

RECHECK_INTERVAL = HEARTBEAT_INTERVAL
"""Seconds between two reads of the followed sessions even when nothing was written: a holder killed
without releasing its sessions writes nothing, and its session is free once it is gone."""


def free_reason(name: str) -> str:
    """What a read-only view says once the process that held it is gone."""
    return (
        f"session {name!r} is free now: the process that held it is gone; shown read-only here "
        "until /takeover makes this window its writer"
    )


def held_reason(name: str, holder: str) -> str:
    """What a read-only view says while another live process (``holder``) holds it."""
    return (
        f"session {name!r} is held by {holder}: shown read-only here (it follows what that process "
        "writes); /takeover takes it over (only when that process is gone or you are sure)"
    )


@dataclass
class _Mark:
    """How far a followed view is: the newest message id it shows, the store revision and the
    conversation it was read at (None until first followed), for the agent copy ``record`` it was
    loaded with (a session closed and opened again starts anew)."""

    record: TurnRecord
    last_message_id: int
    revision: int
    conversation_id: str | None = None


class SessionFollow:
    """Follows the sessions shown read-only here (see the module docstring); ``core.follow``'s loop."""

    def __init__(self, core: SessionsCore) -> None:
        self.core = core
        self._task: asyncio.Task[None] | None = None
        self._marks: dict[str, _Mark] = {}
        self._free: set[str] = set()

    def ensure(self) -> None:
        """Start the loop (once) when a view became read-only."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run(), name="session-follow")

    async def stop(self) -> None:
        """Stop following (at shutdown)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    def _followed(self) -> list[SessionView]:
        return [view for view in self.core.sessions.values() if view.read_only]

    async def _run(self) -> None:
        core = self.core
        seen: int | None = None
        checked = time.monotonic()
        while self._followed():
            await core.loaded_event.wait()  # restored views get their messages first
            try:
                version = await core.store.changes.data_version()
                if version != seen or time.monotonic() - checked >= RECHECK_INTERVAL:
                    seen, checked = version, time.monotonic()
                    for view in self._followed():
                        await self.catch_up(view)
            except StoreError as exc:  # a busy or closed store: the next round tries again
                log.debug("following read-only sessions: %s", exc)
            except Exception:
                log.exception("following the read-only sessions failed")
            await asyncio.sleep(FOLLOW_INTERVAL)
        self._marks = {sid: m for sid, m in self._marks.items() if sid in core.sessions}

    async def catch_up(self, view: SessionView) -> None:
        """Bring one read-only view up to what its holder wrote; say when the holder is gone."""
        core, sid = self.core, view.id
        agent = core.agents.get(sid)
        record: TurnRecord | None = getattr(agent, "record", None)
        if record is None or record.revision is None:
            return  # not loaded yet: its load reads what was written until then
        rec = await core.store.sessions.get(sid)
        if rec is None or not view.read_only:
            return
        mark = self._marks.get(sid)
        if mark is None or mark.record is not record:
            mark = self._marks[sid] = _Mark(record, record.last_message_id, record.revision)
            self._free.discard(sid)
        if rec.revision != mark.revision or rec.conversation_id != mark.conversation_id:
            if mark.conversation_id not in (None, rec.conversation_id):  # /clear in the holder
                core.emit(ev.ConversationCleared(sid))
            await self._messages(view, mark)
            mark.revision, mark.conversation_id = rec.revision, rec.conversation_id
            # /takeover's catch-up (TurnRecord.sync) adds none of these to the view again
            record.last_message_id = max(record.last_message_id, mark.last_message_id)
        state = SessionState(rec.state) if rec.state in SessionState._value2member_map_ else None
        if state is not None and state != view.state:
            core.emit(ev.SessionStateChanged(sid, state, "in the process holding it"))
        if rec.usage != view.usage or rec.last_prompt_tokens != view.context_tokens:
            spend = priced(core.config, await core.store.budgets.spend_rows(session_id=sid))
            core.emit(ev.UsageUpdated(sid, rec.usage, rec.last_prompt_tokens, view.context_window, spend))
        await self._holder(view)

    async def _messages(self, view: SessionView, mark: _Mark) -> None:
        """Emit the messages appended since ``mark`` as the holder did: a prompt starts a turn."""
        core, sid = self.core, view.id
        for stored in await core.store.messages.load_after(sid, mark.last_message_id):
            if view.read_only is None:
                return  # taken over meanwhile: its own catch-up reads the rest
            mark.last_message_id = max(mark.last_message_id, stored.id)
            shown = stored.for_display()
            if stored.role == "user":
                content = shown.get("content")
                core.emit(ev.TurnStarted(sid, content if isinstance(content, str) else ""))
            core.emit(ev.MessageAdded(sid, shown))

    async def _holder(self, view: SessionView) -> None:
        """Say once when the holder is gone (the session is free), and again when a live process
        holds it anew."""
        core, sid = self.core, view.id
        holder = await core.store.holders.live(sid)
        if view.read_only is None:
            return
        if holder is None and sid not in self._free:
            self._free.add(sid)
            reason = free_reason(view.name)
            core.emit(ev.ReadOnlyChanged(sid, reason))
            core.emit(ev.Notice(sid, reason, "warning"))
        elif holder is not None and sid in self._free:
            self._free.discard(sid)
            core.emit(ev.ReadOnlyChanged(sid, held_reason(view.name, holder.describe())))

    def forget(self, sid: str) -> None:
        """Drop what was followed of ``sid`` (taken over, closed): followed anew if it becomes read-only."""
        self._marks.pop(sid, None)
        self._free.discard(sid)
