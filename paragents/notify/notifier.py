"""Which core events become notifications, and their delivery (:class:`Notifier`).

A session changing into **needs you** (an approval, a conflict, a budget or loop-guard pause, or a
**question**: the turn ended asking the user something, ``QuestionAsked``, until a prompt is sent)
or a turn ending **finished** / **failed** gives one notification saying who, why and what to press
("api · approve `rm -rf build/` (run_command) · f2"). A session that already needs you is not
announced again until it was unblocked. Never for the session the user is looking at (``is_visible``);
none for a muted session. Notifications that arrive within ``digest_window`` seconds of each other go
out as one digest ("paragents · 3 need you: api, web, docs"). A session still blocked
``escalate_after`` seconds after its notification gets one reminder. The clock is injected (tests use
a fake one); :meth:`Notifier.tick` does the sending and must be called regularly (the app: every second).

Delivery: the terminal sequence (``paragents.notify.escapes``, when ``notify.enabled``), the webhook
and the command (when configured, in background tasks that never block a turn; a webhook is retried
with backoff, and what still fails is kept in ``failures``, which the overview shows).

The terminal title says "paragents · 2 need you" and follows the count as soon as it changes (when
the event arrives, not at the next tick), whether or not ``notify.enabled``: a title is quiet, and
it is what a tmux status line or a tab shows. Only ``notify.method: "off"`` turns it off. Before the
first title the terminal's own title is pushed (``CSI 22;0t``) and :meth:`Notifier.restore_title`
pops it (``CSI 23;0t``) at exit.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from paragents import events as ev
from paragents.models import SessionState
from paragents.notify.escapes import clean, notification_bytes, title_sequence
from paragents.notify.outbound import DELAYS, post_webhook, run_command, webhook_body

if TYPE_CHECKING:
    from paragents.config import NotifySettings

INBOX_KEY = "f2"
"""The key that opens the inbox, named in every needs-you notification."""
UNBLOCKED = {SessionState.RUNNING, SessionState.IDLE, SessionState.QUEUED, SessionState.CLOSED}


@dataclass(frozen=True, slots=True)
class Note:
    """One notification: ``kind`` needs / finished / failed / reminder / digest; ``text`` as sent."""

    session_id: str
    name: str
    kind: str
    text: str


@dataclass
class _Blocked:
    since: float
    text: str
    reminded: bool = False
    kind: str = "ask"
    """What the session needs: ask (approval, conflict), budget, question or lane (its lane's container
    or Pod does not answer)."""


PUSH_TITLE = "\x1b[22;0t"
"""Save the terminal's title (xterm's title stack; tmux and most terminals keep one)."""
POP_TITLE = "\x1b[23;0t"
"""Restore the title saved by :data:`PUSH_TITLE`."""


@dataclass
class Notifier:
    """Turns core events into notifications (see module docstring)."""

    settings: NotifySettings
    env: Mapping[str, str]
    write: Callable[[str], None]
    """Writes escape sequences to the terminal (the app's driver)."""
    is_visible: Callable[[str], bool] = lambda sid: False
    names: Callable[[str], str] = lambda sid: sid
    clock: Callable[[], float] = time.monotonic
    digest_window: float = 0.5
    muted: set[str] = field(default_factory=set)
    sent: list[Note] = field(default_factory=list)
    """Every notification sent, oldest first (tests and the overview read it)."""
    failures: list[str] = field(default_factory=list)
    """Outbound deliveries that failed for good (webhook, command), readable, oldest first."""
    blocked: dict[str, _Blocked] = field(default_factory=dict)
    webhook_delays: tuple[float, ...] = DELAYS
    """Seconds before each retry of a failed webhook POST (backoff; tests shorten it)."""
    _pending: list[tuple[float, Note]] = field(default_factory=list)
    _tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    _title: str = "paragents"
    """The terminal title last written."""
    _pushed: bool = False
    """True once the terminal's own title was pushed (popped by :meth:`restore_title`)."""

    # -- input ------------------------------------------------------------------------------------------
    def observe(self, event: ev.Event) -> None:
        """Look at one core event; queue the notification it calls for (sent by :meth:`tick`)."""
        sid = event.session_id
        name = clean(self.names(sid), 40)
        why: str | None = None
        kind = "ask"
        match event:
            case ev.PermissionRequested(summary=summary, call=call):
                what = summary.removeprefix(f"{call.name} ")  # the summary may start with the tool
                why = f"approve `{clean(what, 80)}` ({clean(call.name, 40)})"
            case ev.ConflictDetected(summary=summary):
                why = f"conflict: {clean(summary, 80)}"
            case ev.BudgetPaused(reason=reason):
                why, kind = clean(reason, 120), "budget"
            case ev.LanePlaceChanged(state="unreachable", lane=lane):
                why, kind = f"lane {clean(lane, 40)} unreachable: paused until it answers", "lane"
            case ev.QuestionAsked(text=text):
                why, kind = f"question: {clean(text, 100)}", "question"
            case ev.SessionStateChanged(state=state) if SessionState(state) in UNBLOCKED:
                self.blocked.pop(sid, None)
                self._pending = [
                    (t, n) for t, n in self._pending if not (n.session_id == sid and n.kind == "needs")
                ]
            case ev.TurnFinished(status=status, error=error):
                asked = self.blocked.get(sid)
                if asked is not None and asked.kind == "question" and status == "completed":
                    pass  # the turn ended asking: the question was announced, it still needs you
                elif status == "completed":
                    self.blocked.pop(sid, None)
                    self._queue(Note(sid, name, "finished", f"{name} · finished"))
                else:
                    self.blocked.pop(sid, None)
                    if status == "failed":
                        text = f"{name} · failed: {clean(error or '', 100)}"
                        self._queue(Note(sid, name, "failed", text))
        if why is not None and sid not in self.blocked:
            self.blocked[sid] = _Blocked(self.clock(), why, kind=kind)
            self._queue(Note(sid, name, "needs", f"{name} · {why} · {INBOX_KEY}"))
        self.sync_title()

    def _queue(self, note: Note) -> None:
        if note.session_id in self.muted or self.is_visible(note.session_id):
            return
        self._pending.append((self.clock(), note))

    def mute(self, sid: str, muted: bool = True) -> None:
        """Mute (or unmute) the notifications of session ``sid``."""
        if muted:
            self.muted.add(sid)
            self._pending = [(t, n) for t, n in self._pending if n.session_id != sid]
        else:
            self.muted.discard(sid)

    @property
    def busy(self) -> bool:
        """True while a notification is queued or a session is blocked (:meth:`tick` has work)."""
        return bool(self._pending or self.blocked)

    def title(self) -> str:
        """Return the terminal title: "paragents · 2 need you" (just "paragents" when none do)."""
        n = len(self.blocked)
        return f"paragents · {n} need{'s' if n == 1 else ''} you" if n else "paragents"

    # -- output -----------------------------------------------------------------------------------------
    def tick(self) -> list[Note]:
        """Send what is due: the queued notifications (one digest when several), then one reminder per
        session blocked for ``escalate_after`` seconds. Return what was sent now."""
        now = self.clock()
        out: list[Note] = []
        if self._pending and now - self._pending[-1][0] >= self.digest_window:
            notes = [n for _, n in self._pending]
            self._pending = []
            if len(notes) == 1:
                out.append(notes[0])
            else:
                names = ", ".join(dict.fromkeys(n.name for n in notes))
                needs = sum(n.kind == "needs" for n in notes)
                head = f"{needs} need you" if needs else f"{len(notes)} updates"
                out.append(Note("", "", "digest", f"paragents · {head}: {names} · {INBOX_KEY}"))
        wait = self.settings.escalate_after
        for sid, item in self.blocked.items():
            if wait and not item.reminded and now - item.since >= wait:
                item.reminded = True
                if sid in self.muted or self.is_visible(sid):
                    continue
                name = clean(self.names(sid), 40)
                minutes = f"{(now - item.since) / 60:.0f} min"
                out.append(
                    Note(
                        sid,
                        name,
                        "reminder",
                        f"{name} · still waiting ({minutes}): {item.text} · {INBOX_KEY}",
                    )
                )
        for note in out:
            self._deliver(note)
        self.sync_title()
        return out

    def sync_title(self) -> None:
        """Write the terminal title when the needs-you count changed (see module docstring)."""
        title = self.title()
        if title == self._title or self.settings.method == "off":
            return
        if not self._pushed:
            self._pushed = True
            self.write(PUSH_TITLE)
        self.write(title_sequence(title))
        self._title = title

    def restore_title(self) -> None:
        """At exit: give the terminal back the title it had before (when this notifier changed it)."""
        if self._pushed:
            self._pushed = False
            self.write(POP_TITLE)
        self._title = "paragents"

    def _deliver(self, note: Note) -> None:
        self.sent.append(note)
        settings = self.settings
        if settings.enabled and settings.method != "off":
            self.write(notification_bytes("paragents", note.text, self.env, settings.method))
        if settings.webhook:
            body = webhook_body(settings.webhook, "paragents", note.text, note.name, note.kind)
            self._spawn(post_webhook(settings.webhook, body, delays=self.webhook_delays))
        if settings.command:
            self._spawn(run_command(settings.command, note.text))

    def _spawn(self, work: Any) -> None:
        try:
            task = asyncio.get_running_loop().create_task(work)
        except RuntimeError:  # no loop (a synchronous caller): nothing can be sent in the background
            work.close()
            self.failures.append("outbound notification skipped: no event loop")
            return
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        error = task.exception()
        why = f"notification failed: {error}" if error is not None else task.result()
        if why:
            self.failures.append(why)

    async def drain(self) -> None:
        """Wait for the outbound deliveries still running (tests; shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
