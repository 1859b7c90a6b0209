"""The one place that acts on a bar's answer (:class:`~paragents.ui.core.messages.Answer`).

Every bar (approval, conflict, budget and loop guard, the lane question, a predicted lane conflict, a
stale agent session), in a panel or in the inbox, posts an ``Answer`` with a typed choice; the app
hands it to :func:`handle`, which resolves the ask's Future or calls the runtime, then lets the panel
show its next bar and the inbox re-read its items. Bars hold no runtime and no callback."""

from __future__ import annotations

from typing import TYPE_CHECKING

from paragents.ui.core.commands import SlashCommand
from paragents.ui.core.messages import (
    AgentNewChoice,
    AnswerChoice,
    ApprovalChoice,
    BudgetChoice,
    ConflictChoice,
    LaneChoice,
    PredictionChoice,
)
from paragents.ui.core.text import clean
from paragents.ui.inbox.screen import InboxScreen
from paragents.ui.lanes import hooks as lane_hooks
from paragents.ui.lanes.prediction import SidesScreen
from paragents.ui.widgets.conflict_bar import resolve
from paragents.ui.widgets.prediction_bar import prediction_summary

if TYPE_CHECKING:
    from paragents.ui.app_api import AppAPI


async def handle(app: AppAPI, choice: AnswerChoice) -> None:
    """Act on one answer; a refused one (a budget value that does not parse, a prediction gone
    meanwhile) is one error toast."""
    try:
        await _act(app, choice)
    except Exception as exc:  # SessionError and friends carry a readable message
        app.notify(clean(str(exc)), severity="error", timeout=8)
    screen = app.screen
    if isinstance(screen, InboxScreen) and not isinstance(choice, LaneChoice | AgentNewChoice):
        await screen.reload(arm=isinstance(choice, PredictionChoice))


async def _act(app: AppAPI, choice: AnswerChoice) -> None:
    match choice:
        case ApprovalChoice(ask=ask, answer=answer):
            if not ask.reply.done():
                ask.reply.set_result(answer)
            panel = app.panels.get(ask.session_id)
            if panel is not None:
                await panel.answered()
        case ConflictChoice(conflict=conflict, answer=answer):
            resolve(conflict, answer)
            panel = app.panels.get(conflict.session_id)
            if panel is not None:  # "wait" emits nothing until the call runs: the bar goes now
                await panel.answered()
        case BudgetChoice(pause=pause, action=action, value=value):
            result = app.runtime.budgets.answer_pause(pause.pause_id, action, value, "user")
            if not result.accepted:  # answered first elsewhere (paragents serve): say so
                app.notify(clean(result.message), severity="warning", timeout=8)
        case LaneChoice():
            await lane_hooks.lane_answered(app, choice)
        case PredictionChoice(prediction=p, action=action):
            if action == "sides":
                sides = await app.runtime.lanes.lane_conflict_sides(p.key)
                app.show_screen(SidesScreen(prediction_summary(p), sides))
            elif action in ("adapt_a", "adapt_b"):
                lane, other = (p.a, p.b) if action == "adapt_a" else (p.b, p.a)
                sid = next(sid for sid, view in app.runtime.sessions.items() if view.lane == lane)
                await app.runtime.lanes.adapt_lane(sid, other)
                app.notify(f"Asked {lane}'s agent to adapt to {other}'s change (queued).")
            else:
                app.runtime.lanes.dismiss_lane_conflict(p.key)
        case AgentNewChoice(session_id=sid):
            app.start_command(sid, SlashCommand("agent", "new"))
