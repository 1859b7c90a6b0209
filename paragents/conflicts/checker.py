"""The preflight conflict checker: run before every tool call that passed permissions.

A call conflicts when another session holds a reservation on an overlapping path or on the same named
resource, when its write targets cannot be known while another session holds any reservation, or
(write_file/edit_file) when the file changed on disk since this session last read or wrote it. A
conflict holds the call and emits :class:`paragents.events.ConflictDetected`; the client answers its
Future with ``wait`` / ``run_anyway`` / ``skip`` / ``reread``. A call without conflict takes
reservations on its targets, in the store (so other paragents processes see them), until its turn ends.

Waiting never polls within one process: releases notify an ``asyncio.Condition``. Holders in another
process are re-checked every :attr:`ConflictChecker.poll_interval` seconds. While no answer came,
a holder that releases resolves the conflict by itself ("auto"). Without a terminal
(:attr:`ConflictChecker.unattended_wait` set), an unanswered conflict waits that long, then the call is
skipped (stale reads: the model is told and given the new content).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import os
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from paragents import events as ev
from paragents.conflicts.ports import PORT_PREFIX
from paragents.conflicts.reads import ReadTracker, Stale
from paragents.conflicts.targets import RESOURCE_PREFIX, CallTargets, call_targets, paths_overlap
from paragents.models import ToolCall
from paragents.store.connection import pid_alive

if TYPE_CHECKING:
    from paragents.store.approvals import ApprovalsRepo
    from paragents.store.reservations import ReservationsRepo
    from paragents.store.session_events import SessionEventsRepo
    from paragents.store.sessions import SessionsRepo

UNATTENDED_WAIT = 300.0
"""Seconds an unanswered conflict waits when no terminal can ask (``paragents run`` in a pipe)."""
POLL_INTERVAL = 0.5
"""Seconds between store re-checks while waiting on a holder in another process."""
MAX_REREAD_CHARS = 20000
"""The new content sent with a "re-read first" answer is cut to this many characters."""

WAIT_CHOICES: tuple[ev.ConflictAnswer, ...] = ("wait", "run_anyway", "skip")
STALE_CHOICES: tuple[ev.ConflictAnswer, ...] = ("reread", "run_anyway", "skip")


@dataclass(frozen=True)
class Conflict:
    """One found conflict (before it is shown): see :class:`paragents.events.ConflictDetected`.
    ``foreign`` is True when the holder is another process (its release is polled)."""

    kind: ev.ConflictKind
    path: str
    holder: str
    holder_reason: str
    since: float
    diff: str | None = None
    foreign: bool = False
    stale: Stale | None = None
    generation: int = 0
    others: tuple[str, ...] = ()
    """Stale reads: the other sessions that read or wrote the file too."""

    def key(self) -> tuple[str, str, str]:
        """Identity used to tell whether a re-check found the same conflict."""
        return (self.kind, self.path, self.holder)


def row_reason(shown: ev.ConflictDetected) -> str:
    """The reason of a conflict's approvals row: "stale_read on PATH, changed by api (also read by
    web)" or "reservation on PATH, held by api"."""
    reason = f"{shown.kind} on {shown.path}"
    if shown.holder:
        reason += f", {'changed' if shown.kind == 'stale_read' else 'held'} by {shown.holder}"
    if shown.others:
        reason += f" (also read by {', '.join(shown.others)})"
    return reason


@dataclass(frozen=True)
class Held:
    """A reservation this process holds: ``path`` (or ``resource:NAME``), ``kind``, ``reason``, ``since``."""

    path: str
    kind: str
    reason: str
    since: float


class ConflictStore(Protocol):
    """The store's tables the checker uses: reservations, the conflict rows a held call waits on,
    the session events and the sessions' names (``paragents.store.Store`` is one)."""

    @property
    def reservations(self) -> ReservationsRepo: ...
    @property
    def approvals(self) -> ApprovalsRepo: ...
    @property
    def events(self) -> SessionEventsRepo: ...
    @property
    def sessions(self) -> SessionsRepo: ...


class ConflictChecker:
    """Checks tool calls of every session of one runtime; plug :meth:`preflight` into each ``Agent``.

    Takes the ``store`` (a :class:`ConflictStore`: ``paragents.store.Store``), ``emit`` (the
    runtime's event sink), and callables giving a session's name, running turn id, workdir, and
    setting its waiting state (``set_waiting(session_id, holder or None)``); ``resources`` are
    ``SharedResource``s from the config; ``summarize(call, args)`` returns a one-line call summary."""

    def __init__(
        self,
        store: ConflictStore,
        *,
        emit: ev.EventSink,
        session_name: Callable[[str], str | None],
        turn_of: Callable[[str], int | None],
        workdir_of: Callable[[str], Path],
        set_waiting: Callable[[str, str | None], None],
        summarize: Callable[[ToolCall, dict[str, Any]], str],
        resources: Iterable[Any] = (),
    ) -> None:
        self.store = store
        self.emit = emit
        self.session_name = session_name
        self.turn_of = turn_of
        self.workdir_of = workdir_of
        self.set_waiting = set_waiting
        self.summarize = summarize
        self.resources = tuple(resources)
        self.reads = ReadTracker()
        self.pid = os.getpid()
        self.poll_interval = POLL_INTERVAL
        self.unattended_wait: float | None = None
        """Seconds to wait for an answer nobody can give (no terminal); None: wait for the user."""
        self._held: dict[str, list[Held]] = {}
        self._lock = asyncio.Lock()
        self._released = asyncio.Condition()
        self._names: dict[str, str] = {}
        self._generation = 0
        self._queue: dict[str, tuple[int, CallTargets, str, float]] = {}
        """Held calls of this process: session -> (arrival number, targets, summary, since); first come,
        first served."""
        self._arrivals = itertools.count()
        """Counts releases in this process (waiters compare it with the value seen at their check)."""

    # -- tool hooks ------------------------------------------------------------------------------------
    def on_read(self, session_id: str, path: Path, digest: str) -> None:
        """``ToolContext.on_read`` of ``session_id``: remember the file's hash (and small text)."""
        self.reads.saw(session_id, path, digest, "read")

    def on_write(self, session_id: str, path: Path, digest: str) -> None:
        """``ToolContext.on_write`` of ``session_id``: the session now knows the content it wrote."""
        self.reads.saw(session_id, path, digest, "write")

    def read_hook(self, session_id: str) -> Callable[[Path, str], None]:
        """Return the ``ToolContext.on_read`` callable of ``session_id`` (path, sha256 hex)."""
        return functools.partial(self.on_read, session_id)

    def write_hook(self, session_id: str) -> Callable[[Path, str], None]:
        """Return the ``ToolContext.on_write`` callable of ``session_id`` (path, sha256 hex)."""
        return functools.partial(self.on_write, session_id)

    def held(self, session_id: str) -> list[Held]:
        """Return the reservations ``session_id`` holds in this process, oldest first."""
        return list(self._held.get(session_id, ()))

    # -- releasing ---------------------------------------------------------------------------------------
    async def release(self, session_id: str) -> int:
        """Release every reservation of ``session_id`` (its turn ended, was cancelled, or it closed),
        wake the calls waiting on it; return how many store rows were deleted."""
        self._held.pop(session_id, None)
        # a lane's ports (``port:N``, kind "port") stay held while the lane exists
        count = int(await self.store.reservations.release(session_id=session_id, keep_kind="port"))
        await self._notify()
        return count

    async def _notify(self) -> None:
        async with self._released:
            self._generation += 1
            self._released.notify_all()

    def forget(self, session_id: str) -> None:
        """Drop the read tracking of a closed session."""
        self.reads.forget(session_id)

    async def release_dead(self) -> str | None:
        """Release reservations whose process is gone (at start); return a readable note, or None."""
        dead = [r for r in await self.store.reservations.all() if r.pid is not None and not pid_alive(r.pid)]
        if not dead:
            return None
        await self.store.reservations.release_dead()
        pids = ", ".join(sorted({str(r.pid) for r in dead}))
        paths = ", ".join(dict.fromkeys(r.path for r in dead))
        plural = "s" if len(dead) != 1 else ""
        return f"released {len(dead)} reservation{plural} left by stopped process(es) {pids}: {paths}"

    # -- the hook ----------------------------------------------------------------------------------------
    async def preflight(self, session_id: str, call: ToolCall, args: dict[str, Any]) -> str | None:
        """The ``Agent`` preflight hook: return None to run the call (reservations taken), or the text of
        the tool message explaining why it was skipped. Re-raises CancelledError (turn cancelled)."""
        targets = call_targets(call.name, args, self.workdir_of(session_id), self.resources)
        if targets.empty:
            return None
        summary = self.summarize(call, args)
        shown: ev.ConflictDetected | None = None
        deadline: float | None = None
        chose_wait = False
        try:
            while True:
                async with self._lock:
                    conflict = await self._find(session_id, targets)
                    if conflict is None:
                        await self._reserve(session_id, targets, summary)
                if conflict is None:
                    if shown is not None:
                        await self._resolved(session_id, shown, "wait", "user" if chose_wait else "auto")
                    return None
                if shown is not None and (shown.kind, shown.path, shown.holder) == conflict.key():
                    if chose_wait:
                        await self._wait_release(conflict, None)
                        continue
                else:
                    if shown is not None:  # a different conflict came up after a release
                        await self._resolved(session_id, shown, "wait", "user" if chose_wait else "auto")
                        chose_wait = False
                    if session_id not in self._queue:
                        self._queue[session_id] = (next(self._arrivals), targets, summary, time.time())
                    shown = self._show(session_id, call, summary, conflict)
                    await self._add_row(session_id, shown)
                    await self._record(session_id, shown, None, "", final=False)
                    if self.unattended_wait is not None:
                        deadline = time.monotonic() + self.unattended_wait
                answer, by = await self._answer(shown, conflict, deadline)
                if answer is None:  # something was released before anyone answered: re-check
                    continue
                if answer == "wait":
                    chose_wait = True
                    await self._record(session_id, shown, "wait", by, final=False)
                    continue
                await self._resolved(session_id, shown, answer, by)
                if answer == "run_anyway":
                    async with self._lock:
                        await self._reserve(session_id, targets, summary)
                    return None
                if answer == "reread" and conflict.stale is not None:
                    return self._reread_message(session_id, conflict.stale, conflict.holder)
                return self._skip_message(conflict, by)
        except asyncio.CancelledError:
            if shown is not None and not shown.reply.done():
                await asyncio.shield(self._resolved(session_id, shown, "cancelled", "cancelled"))
            raise
        finally:
            if self._queue.pop(session_id, None) is not None:
                await asyncio.shield(self._notify())  # later waiters may go now
            if shown is not None:
                self.set_waiting(session_id, None)

    # -- finding -----------------------------------------------------------------------------------------
    async def _holder_name(self, session_id: str) -> str:
        name = self.session_name(session_id) or self._names.get(session_id)
        if name is None:
            rec = await self.store.sessions.get(session_id)
            name = rec.name if rec is not None else session_id
            self._names[session_id] = name
        return name

    async def _find(self, session_id: str, targets: CallTargets) -> Conflict | None:
        generation = self._generation
        others = [r for r in await self.store.reservations.all() if r.session_id != session_id]
        mine = [*targets.paths, *(RESOURCE_PREFIX + n for n in targets.resources)]
        mine += [f"{PORT_PREFIX}{n}" for n in targets.ports]
        for res in others:
            for path in mine:
                if paths_overlap(path, res.path):
                    kind: ev.ConflictKind = (
                        "resource" if res.path.startswith((RESOURCE_PREFIX, PORT_PREFIX)) else "reservation"
                    )
                    return Conflict(
                        kind,
                        res.path,
                        await self._holder_name(res.session_id),
                        res.reason or "",
                        res.created_at,
                        foreign=res.pid != self.pid,
                        generation=generation,
                    )
        mine_seq = self._queue[session_id][0] if session_id in self._queue else None
        for other, (seq, theirs, reason, since) in self._queue.items():
            if other == session_id or (mine_seq is not None and seq > mine_seq):
                continue
            for path in mine:
                theirs_all = [*theirs.paths, *(RESOURCE_PREFIX + n for n in theirs.resources)]
                hit = next((t for t in theirs_all if paths_overlap(path, t)), None)
                if hit is not None:
                    return Conflict(
                        "resource" if hit.startswith(RESOURCE_PREFIX) else "reservation",
                        hit,
                        await self._holder_name(other),
                        f"waiting to run: {reason}",
                        since,
                        generation=generation,
                    )
        writers = [r for r in others if r.kind != "port"]  # a lane's ports say nothing of its files
        if targets.unknown and writers:
            res = writers[0]
            return Conflict(
                "unknown_targets",
                res.path,
                await self._holder_name(res.session_id),
                res.reason or "",
                res.created_at,
                foreign=res.pid != self.pid,
                generation=generation,
            )
        if targets.file is not None:
            stale = await self.reads.stale(session_id, targets.file)
            if stale is not None:
                return await self._stale_conflict(session_id, targets.file, stale)
        return None

    async def _stale_conflict(self, session_id: str, path: str, stale: Stale) -> Conflict:
        """The stale-read conflict on ``path``, naming the session of this process that changed it
        (and when), and the other sessions that read or wrote it too."""
        write = self.reads.changed_by(session_id, stale)
        writer = await self._holder_name(write.session_id) if write is not None else ""
        others = [await self._holder_name(sid) for sid in self.reads.others(session_id, path)]
        return Conflict(
            "stale_read",
            path,
            writer,
            "",
            write.at if write is not None else stale.seen.at,
            stale.diff,
            stale=stale,
            others=tuple(name for name in others if name != writer),
        )

    async def _reserve(self, session_id: str, targets: CallTargets, reason: str) -> None:
        held = self._held.setdefault(session_id, [])
        have = {h.path for h in held}
        wanted = [(p, "write") for p in targets.paths] + [
            (RESOURCE_PREFIX + n, "resource") for n in targets.resources
        ]
        turn_id = self.turn_of(session_id)
        for path, kind in wanted:
            if path in have:
                continue
            await self.store.reservations.add(
                session_id, path, kind, turn_id=turn_id, reason=reason, pid=self.pid
            )
            held.append(Held(path, kind, reason, time.time()))
            have.add(path)

    # -- asking ------------------------------------------------------------------------------------------
    def _show(self, session_id: str, call: ToolCall, summary: str, conflict: Conflict) -> ev.ConflictDetected:
        loop = asyncio.get_running_loop()
        reply: asyncio.Future[ev.ConflictAnswer] = loop.create_future()
        event = ev.ConflictDetected(
            session_id,
            uuid.uuid4().hex[:12],
            call,
            summary,
            conflict.kind,
            conflict.path,
            conflict.holder,
            conflict.holder_reason,
            conflict.since,
            conflict.diff,
            STALE_CHOICES if conflict.kind == "stale_read" else WAIT_CHOICES,
            reply,
            conflict.others,
        )
        stale = conflict.kind == "stale_read"  # it waits on the user's answer, not on the writer
        self.set_waiting(session_id, conflict.path if stale else conflict.holder or conflict.path)
        self.emit(event)
        return event

    async def _answer(
        self, shown: ev.ConflictDetected, conflict: Conflict, deadline: float | None
    ) -> tuple[ev.ConflictAnswer | None, str]:
        """Wait for the user's answer; for holder conflicts also for a release. Returns (answer, by):
        answer None means "re-check" (something was released before an answer came). Past
        ``deadline`` (monotonic seconds; unattended only) the answer is skip (reread for stale reads)."""
        reply = shown.reply
        row: asyncio.Future[Any] = asyncio.ensure_future(self.store.approvals.wait(shown.conflict_id))
        try:
            if not reply.done():
                left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
                if left == 0.0:
                    return ("reread" if conflict.kind == "stale_read" else "skip"), "unattended"
                waiters: set[asyncio.Future[Any]] = {reply, row}
                if conflict.kind != "stale_read":
                    waiters.add(asyncio.ensure_future(self._wait_release(conflict, left)))
                _done, pending = await asyncio.wait(
                    waiters, timeout=left, return_when=asyncio.FIRST_COMPLETED
                )
                for task in pending:
                    if task is not reply and task is not row:
                        task.cancel()
                if row.done() and not row.cancelled() and row.exception() is None:
                    answered = row.result()
                    if answered.state == "answered" and answered.answer in shown.choices:
                        if not reply.done():
                            reply.set_result(answered.answer)  # the client's bar goes away
                        by = answered.answered_by or "user"
                        if answered.answer == "wait":  # nothing else ends the bar while it waits
                            self.emit(ev.ConflictResolved(shown.session_id, shown.conflict_id, "wait", by))
                        return answered.answer, by
                if not reply.done():
                    return None, "auto"
            if reply.cancelled():
                return None, "auto"
            return await self._answer_row(shown, reply.result())
        finally:
            if not row.done():
                row.cancel()

    async def _answer_row(self, shown: ev.ConflictDetected, answer: ev.ConflictAnswer) -> tuple[Any, str]:
        """Write this process's client's answer to the conflict's row; the row's first answer wins."""
        result = await self.store.approvals.answer(shown.conflict_id, answer, "user")
        first = result.approval
        if result.accepted or first is None or first.state != "answered" or first.answer is None:
            return answer, "user"
        self.emit(ev.Notice(shown.session_id, f"your answer was not taken: {result.message}", "warning"))
        return first.answer, first.answered_by or "user"

    async def _wait_release(self, conflict: Conflict, timeout: float | None) -> None:
        """Return once a release happened in this process since ``conflict`` was found (at once when
        one already did), after ``timeout`` seconds, or after ``poll_interval`` for a foreign holder."""
        if conflict.foreign:
            timeout = self.poll_interval if timeout is None else min(timeout, self.poll_interval)
        async with self._released:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    self._released.wait_for(lambda: self._generation != conflict.generation), timeout
                )

    async def _add_row(self, session_id: str, shown: ev.ConflictDetected) -> None:
        """Record the held call as a pending ``conflict`` row (answerable from any process)."""
        call = shown.call
        await self.store.approvals.add(
            shown.conflict_id,
            session_id,
            kind="conflict",
            tool=call.name,
            summary=shown.summary,
            call={"id": call.id, "name": call.name, "arguments": call.arguments},
            turn_id=self.turn_of(session_id),
            reason=row_reason(shown),
            preview=shown.diff or "",
            choices=shown.choices,
        )

    async def _resolved(self, session_id: str, shown: ev.ConflictDetected, answer: str, by: str) -> None:
        if not shown.reply.done():
            shown.reply.cancel()
        if by in ("auto", "cancelled", "unattended"):
            with contextlib.suppress(Exception):  # a row answered meanwhile keeps its answer
                await self.store.approvals.close(shown.conflict_id, f"resolved without an answer ({by})")
        self.emit(ev.ConflictResolved(session_id, shown.conflict_id, answer, by))
        await self._record(session_id, shown, answer, by, final=True)

    async def _record(
        self, session_id: str, shown: ev.ConflictDetected, answer: str | None, by: str, *, final: bool
    ) -> None:
        data = {
            "conflict_id": shown.conflict_id,
            "phase": "resolved" if final else ("detected" if answer is None else "answered"),
            "kind": shown.kind,
            "tool": shown.call.name,
            "summary": shown.summary,
            "path": shown.path,
            "holder": shown.holder,
            "holder_reason": shown.holder_reason,
            "since": shown.since,
            "answer": answer,
            "by": by or None,
        }
        with contextlib.suppress(Exception):  # the audit trail must never break a turn
            await self.store.events.record(session_id, "conflict", data)

    # -- messages to the model -----------------------------------------------------------------------------
    def _skip_message(self, conflict: Conflict, by: str) -> str:
        who = f"session {conflict.holder!r}" if conflict.holder else "another session"
        if conflict.kind == "stale_read":
            why = f"{conflict.path} changed on disk since you last read it" + (
                f" ({who} wrote it)" if conflict.holder else ""
            )
        elif conflict.kind == "resource" and conflict.path.startswith(PORT_PREFIX):
            port = conflict.path.removeprefix(PORT_PREFIX)
            why = f"port {port} belongs to {who} ({conflict.holder_reason}); use your own ports ($PORT)"
        elif conflict.kind == "resource":
            why = f"{who} is using the shared resource {conflict.path.removeprefix(RESOURCE_PREFIX)}"
        elif conflict.kind == "unknown_targets":
            why = (
                f"the files this command writes cannot be known while {who} holds {conflict.path} "
                "(until its turn ends)"
            )
        else:
            why = f"{who} holds {conflict.path} for writing until its turn ends"
        if by == "unattended":
            return (
                f"skipped: {why}, and no answer came within {self.unattended_wait:.0f} s (no terminal to ask)"
            )
        return f"skipped by the user: {why}; the call was not run"

    def _reread_message(self, session_id: str, stale: Stale, writer: str) -> str:
        if stale.digest:
            self.reads.saw(session_id, stale.path, stale.digest, "read")
        who = f"session {writer!r} wrote it" if writer else "another session or the user edited it"
        head = (
            f"not run: {stale.path} changed on disk since you last read it ({who}). Re-apply your "
            "change to the current content"
        )
        if stale.text is None:
            return head + "; read it again with read_file first (it is large, binary or was deleted)."
        text = stale.text
        if len(text) > MAX_REREAD_CHARS:
            text = text[:MAX_REREAD_CHARS] + f"\n… [cut at {MAX_REREAD_CHARS} characters; use read_file]"
        return f"{head}. Current content:\n{text}"
