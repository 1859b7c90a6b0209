"""Budget and notification hooks of the app, kept out of ``app.py``: the panel's spend label, the
``/budget`` and ``/mute`` commands, the inbox's budget rows, and the :class:`~paragents.notify.Notifier`
fed with every core event and ticked every second."""

from __future__ import annotations

import os
from typing import Any

from paragents import events as ev
from paragents.agent.tokens import cost_usd
from paragents.limits import format_tokens, format_usd
from paragents.notify import Notifier
from paragents.ui.commands import SlashCommand


def budget_label(runtime: Any, sid: str) -> str:
    """Return the panel title's spend: "$0.03 of $0.05 (60%)" or "12k of 50k tok (24%)", "$0.03"
    when there is no cap, "" when nothing can be said. Money is estimated from the session's token
    totals at its current model's prices (hence "≈" when part of the usage was estimated locally)."""
    view = runtime.sessions.get(sid)
    budgets = getattr(runtime, "budgets", None)
    if view is None or budgets is None:
        return ""
    caps = budgets.caps(sid)
    cap = caps.get("session")
    settings = runtime.config.model_settings(view.model)
    usd = cost_usd(view.usage, settings.input_price_per_mtok, settings.output_price_per_mtok)
    if cap is not None and cap.usd is not None and usd is not None:
        return f"{format_usd(usd)} of {format_usd(cap.usd)} ({round(100 * usd / cap.usd)}%)"
    if cap is not None and cap.tokens is not None:
        used = view.usage.total_tokens
        return f"{format_tokens(used)} of {format_tokens(cap.tokens)} tok ({round(100 * used / cap.tokens)}%)"
    return format_usd(usd) if usd else ""


def budget_items(app: Any) -> list[Any]:
    """Return the inbox rows of sessions held at a budget or the loop guard."""
    from paragents.ui.screens.inbox import InboxItem
    from paragents.ui.widgets.budget_bar import pause_summary

    items = []
    for sid, panel in app.panels.items():
        view = getattr(app.runtime, "sessions", {}).get(sid)
        pause = getattr(view, "budget_pause", None)
        if pause is not None and not pause.reply.done():
            since = app.activity.asked.get(f"budget:{sid}")
            items.append(
                InboxItem(
                    f"budget:{sid}",
                    sid,
                    panel.name_,
                    "budget",
                    pause_summary(panel.name_, pause),
                    since,
                    pause,
                )
            )
    return items


def paused_count(app: Any) -> int:
    """Return how many open sessions are held at a budget or the loop guard (the header counts them)."""
    views = getattr(app.runtime, "sessions", {})
    return sum(1 for sid in app.panels if getattr(views.get(sid), "budget_pause", None) is not None)


async def run_budget_command(app: Any, sid: str, command: SlashCommand) -> None:
    """``/budget`` (show), ``/budget [session|project] VALUE``, ``/budget one-more``, ``/budget stop``;
    ``/mute`` toggles this session's notifications."""
    rt = app.runtime
    if command.name == "mute":
        notifier: Notifier | None = getattr(app, "notifier", None)
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
        if not rt.allow_one_more(sid):
            app.notify("This session is not paused at a budget.")
        return
    if words[0] == "stop":
        if not rt.stop_paused(sid):
            app.notify("This session is not paused at a budget.")
        return
    level = "session"
    if words[0] in ("session", "project", "group"):
        level, words = words[0], words[1:]
    now = rt.set_budget(sid, level, " ".join(words))
    app.notify(f"{level} budget: {now.describe()}", markup=False)


def install_notifier(app: Any) -> Notifier | None:
    """Build the app's notifier: it sees every core event (a runtime observer), writes through the
    app's driver, never notifies for the focused panel while the app has the screen, and ticks every
    second while something is queued or blocked."""

    def write(data: str) -> None:
        driver = getattr(app, "_driver", None)
        if driver is not None:
            driver.write(data)

    rt = app.runtime
    settings = getattr(getattr(rt, "config", None), "notify", None)
    if settings is None or not hasattr(rt, "observers"):
        return None  # a stand-in runtime (UI tests)
    notifier = Notifier(
        settings,
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
    rt.observers.append(observe)
    return notifier


async def on_event(app: Any, panel: Any, event: ev.Event) -> None:
    """After a core event reached ``panel``: refresh its spend label and the inbox's budget rows."""
    if isinstance(event, ev.UsageUpdated | ev.BudgetChanged | ev.BudgetPaused | ev.BudgetResolved):
        panel.budget_label = budget_label(app.runtime, event.session_id)
        panel.refresh_title()
    if isinstance(event, ev.BudgetPaused):
        app.activity.asked.setdefault(f"budget:{event.session_id}", app.clock())
    if isinstance(event, ev.BudgetPaused | ev.BudgetResolved):
        app.update_header()
        from paragents.ui.screens.inbox import InboxScreen

        if isinstance(app.screen, InboxScreen):
            await app.screen.reload()
