"""Budget and notification hooks of the app, kept out of ``app.py``: the panel's spend label, the
meters (the project's spend today in the header, read from the store in the background), the
``/budget`` and ``/mute`` commands, the inbox's budget and question rows, the overview's notes, and the
:class:`~paragents.notify.Notifier` fed with every core event and ticked every second."""

from __future__ import annotations

import os
import time
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from paragents import events as ev
from paragents.limits import Budget, BudgetError, Spend, format_tokens, format_usd, parse_budget
from paragents.models import SessionState
from paragents.notify import Notifier
from paragents.ui.core.commands import SlashCommand
from paragents.ui.inbox.screen import InboxItem, InboxScreen
from paragents.ui.widgets.budget_bar import pause_summary
from paragents.ui.widgets.panel_title import format_tokens as short_tokens
from paragents.ui.widgets.session_panel import SessionPanel

if TYPE_CHECKING:
    from paragents.sessions import SessionsAPI, SessionView
    from paragents.ui.app_api import AppAPI


def budget_label(runtime: SessionsAPI, sid: str) -> str:
    """Return the panel title's spend: "$0.03 of $0.05 (60%)" or "12k of 50k tok (24%)", "$0.03"
    when there is no cap, "" when nothing can be said. Money is priced per request at the model that
    served it (``view.spend``); "~" marks figures counted from locally estimated tokens."""
    view = runtime.sessions.get(sid)
    if view is None:
        return ""
    cap = runtime.budgets.caps(sid).get("session")
    spend = view.spend
    mark = "~" if spend.estimated else ""
    usd = spend.usd
    if cap is not None and cap.usd is not None and usd is not None:
        return f"{mark}{format_usd(usd)} of {format_usd(cap.usd)} ({round(100 * usd / cap.usd)}%)"
    if cap is not None and cap.tokens is not None:
        used = spend.tokens or view.usage.total_tokens
        percent = round(100 * used / cap.tokens)
        return f"{mark}{format_tokens(used)} of {format_tokens(cap.tokens)} tok ({percent}%)"
    return spend.money() if usd else ""


def budget_items(app: AppAPI) -> list[InboxItem]:
    """Return the inbox rows of sessions held at a budget or the loop guard, or asking a question."""
    items = []
    for sid, panel in app.panels.items():
        view = panel.view
        pause = view.open_pause
        if pause is not None:
            since = app.activity.asked.get(f"budget:{sid}")
            summary = pause_summary(view.name, pause)
            items.append(InboxItem(f"budget:{sid}", sid, view.name, "budget", summary, since, pause))
        question = asking(view)
        if question is not None:
            since = app.activity.asked.get(f"question:{sid}")
            asked = ev.QuestionAsked(sid, question)
            items.append(InboxItem(f"question:{sid}", sid, view.name, "question", question, since, asked))
    return items


def asking(view: SessionView | None) -> str | None:
    """Return the question an idle session ended its turn with (needs you: question), else None."""
    if view is not None and view.question and view.state is SessionState.IDLE:
        return str(view.question)
    return None


def paused_count(app: AppAPI) -> int:
    """Return how many open sessions are held at a budget or the loop guard, or ask a question (the
    header counts them with the asks)."""
    views = app.runtime.sessions
    held = sum(1 for sid in app.panels if (v := views.get(sid)) is not None and v.budget_pause is not None)
    return held + sum(1 for sid in app.panels if asking(views.get(sid)) is not None)


# -- meters: the project's spend today and the sessions' running time --------------------------------
@dataclass
class Meters:
    """What the store says, refreshed in the background (:class:`MeterRefresher`): the project's
    spend and turn seconds today (every process), and each open session's turn seconds."""

    today: Spend = field(default_factory=Spend)
    today_seconds: float = 0.0
    seconds: dict[str, float] = field(default_factory=dict)


class MeterRefresher:
    """Re-reads :class:`Meters` from the store after usage changes (and every
    :data:`METER_SECONDS`), one read at a time, and updates the header."""

    def __init__(self, app: AppAPI) -> None:
        self.app = app
        self.meters = Meters()
        self._busy = False
        self._again = False

    def request(self) -> None:
        """Ask for a refresh (a second request while one runs makes it run once more)."""
        if self._busy:
            self._again = True
            return
        self._busy = True
        self.app.run_worker(self._run(), group="budget-meters")

    async def _run(self) -> None:
        budgets = self.app.runtime.budgets
        try:
            while True:
                self._again = False
                today, secs = await budgets.today(time.time())
                seconds = {sid: await budgets.session_seconds(sid) for sid in list(self.app.panels)}
                self.meters = Meters(today, secs, seconds)
                self.app.update_header()
                if not self._again:
                    break
        except Exception:  # the store is busy or closed: the next refresh tries again
            pass
        finally:
            self._busy = False


METER_SECONDS = 15.0
"""How often the meters are re-read without a change of this process's usage (other processes)."""


_REFRESHERS: weakref.WeakKeyDictionary[AppAPI, MeterRefresher] = weakref.WeakKeyDictionary()
"""The meters' refresher of each app (it goes with the app)."""


def meters(app: AppAPI) -> Meters:
    """Return the app's last read :class:`Meters` (empty before the first read)."""
    refresher = _REFRESHERS.get(app)
    return refresher.meters if refresher is not None else Meters()


def install_meters(app: AppAPI) -> MeterRefresher:
    """Start the meters' refresher: now, and every :data:`METER_SECONDS`."""
    refresher = _REFRESHERS[app] = MeterRefresher(app)
    app.set_interval(METER_SECONDS, refresher.request)
    refresher.request()
    return refresher


def today_text(app: AppAPI) -> str:
    """Return the header's "today ~$0.42 (42% of $1.00)" (:func:`spend_today`); "" for ``paragents
    demo`` (scripted, no model to pay)."""
    if app.demo:
        return ""
    return spend_today(meters(app), app.runtime.budgets.project_cap())


def spend_today(now: Meters, cap: Budget | None) -> str:
    """The header's "today ~$0.42 (42% of $1.00)" (tokens when nothing is priced), "" when the
    project spent nothing today and has no per-day cap."""
    spend = now.today
    if not spend.tokens and cap is None:
        return ""
    shown = (
        spend.money()
        if spend.usd is not None
        else ("~" if spend.estimated else "") + (f"{short_tokens(spend.tokens)} tok")
    )
    text = f"today {shown}"
    used = spend.percents(cap, now.today_seconds)
    return f"{text} ({used})" if used else text


def overview_notes(app: AppAPI) -> list[str]:
    """Return the lines under the overview's table: the project today, failed notifications."""
    lines = []
    today = today_text(app)
    if today:
        lines.append(f"project {today}")
    notifier = app.notifier
    failures = notifier.failures if notifier is not None else []
    if failures:
        lines.append(f"{len(failures)} notification{'s' if len(failures) != 1 else ''} not delivered:")
        lines.extend(f"  {line}" for line in failures[-3:])
    return lines


def restore_title(app: AppAPI) -> None:
    """At exit: give the terminal its own title back (the notifier pushed it)."""
    notifier = app.notifier
    if notifier is not None:
        notifier.restore_title()


async def run_budget_command(app: AppAPI, sid: str, command: SlashCommand) -> None:
    """``/budget`` (show), ``/budget [session|project] VALUE``, ``/budget one-more``, ``/budget stop``;
    ``/mute`` toggles this session's notifications."""
    rt = app.runtime
    if command.name == "mute":
        notifier = app.notifier
        if notifier is not None:
            muted = sid not in notifier.muted
            notifier.mute(sid, muted)
            app.notify(
                "Notifications muted for this session." if muted else "Notifications on for this session."
            )
        return
    words = (command.arg or "").split()
    if not words:
        caps = rt.budgets.caps(sid)
        rows = [
            f"{level}: {cap.describe() if cap else 'no cap'}"
            for level, cap in caps.items()
            if level != "group"
        ]
        spent = budget_label(rt, sid)
        app.notify(
            "\n".join([*rows, f"spent: {spent or 'nothing priced yet'}"]), title="Budget", markup=False
        )
        return
    if words[0] in ("one-more", "one_more"):
        if not rt.budgets.allow_one_more(sid):
            app.notify("This session is not paused at a budget.")
        return
    if words[0] == "stop":
        if not rt.budgets.stop_paused(sid):
            app.notify("This session is not paused at a budget.")
        return
    level = "session"
    if words[0] in ("session", "project", "group"):
        level, words = words[0], words[1:]
    text = " ".join(words)
    before = rt.budgets.caps(sid).get("project_day" if level == "project" else level)
    now = rt.budgets.set_budget(sid, level, text)
    app.notify(f"{level} budget: {now.describe()}{kept_note(before, text, level)}", markup=False)


def kept_note(before: Budget | None, text: str, level: str) -> str:
    """Say which caps of ``before`` a ``/budget LEVEL text`` left in force (it sets only the kinds it
    names): " (the 500k tokens cap still holds: /budget session off clears every cap)"; "" when none."""
    try:
        given = parse_budget(text)
    except BudgetError:
        return ""  # "off" and friends: nothing kept
    if before is None:
        return ""
    kept = [
        Budget.model_construct(**{kind: getattr(before, kind)}).describe()
        for kind in ("usd", "tokens", "seconds")
        if getattr(before, kind) is not None and getattr(given, kind) is None
    ]
    if not kept:
        return ""
    caps = " and ".join(kept)
    verb = "still hold" if len(kept) > 1 else "still holds"
    return f" (the {caps} cap{'s' if len(kept) > 1 else ''} {verb}: /budget {level} off clears every cap)"


def install_notifier(app: AppAPI) -> Notifier:
    """Build the app's notifier: it sees every core event (a runtime observer), writes through the
    app's driver, never notifies for the focused panel while the app has the screen, and ticks every
    second while something is queued or blocked."""

    def write(data: str) -> None:
        driver = getattr(app, "_driver", None)
        if driver is not None:
            driver.write(data)

    rt = app.runtime
    notifier = Notifier(
        rt.config.notify,
        env=os.environ,
        write=write,
        is_visible=lambda sid: sid == app.active_sid and app.screen is app.screen_stack[0],
        names=lambda sid: rt.sessions[sid].name if sid in rt.sessions else sid,
    )

    def tick() -> None:
        notifier.tick()
        if not notifier.busy:
            timer.pause()  # nothing queued or blocked: no wake-ups while idle

    def observe(event: ev.Event) -> None:
        notifier.observe(event)
        if notifier.busy:
            timer.resume()

    timer = app.set_interval(1.0, tick, pause=True)
    rt.observe(observe)
    return notifier


async def on_event(app: AppAPI, panel: SessionPanel, event: ev.Event) -> None:
    """After a core event reached ``panel``: refresh its spend label, the meters, and the inbox's
    budget and question rows."""
    if isinstance(event, ev.UsageUpdated | ev.BudgetChanged | ev.BudgetPaused | ev.BudgetResolved):
        panel.budget_label = budget_label(app.runtime, event.session_id)
        panel.refresh_title()
    if isinstance(event, ev.UsageUpdated | ev.TurnFinished):
        refresher = _REFRESHERS.get(app)
        if refresher is not None:
            refresher.request()
    if isinstance(event, ev.BudgetPaused):
        app.activity.asked.setdefault(f"budget:{event.session_id}", app.clock())
    if isinstance(event, ev.QuestionAsked):
        app.activity.asked[f"question:{event.session_id}"] = app.clock()
    if isinstance(event, ev.BudgetPaused | ev.BudgetResolved | ev.QuestionAsked | ev.TurnStarted):
        app.update_header()
        if isinstance(app.screen, InboxScreen):
            await app.screen.reload()
