"""The TUI side of /review and /split (wt/fanteam): run them as the slash command's worker, open a
panel for each worker session while it works, show the report or ask for the plan's approval, then
close the worker panels (the sessions stay in /sessions and in the run's evidence).

They use :mod:`paragents.fanout`, which drives the :class:`~paragents.sessions.Runtime` itself (the
app's ``runtime``) rather than ``SessionsAPI`` alone."""

from __future__ import annotations

import asyncio
import shlex
from typing import TYPE_CHECKING, Any, cast

from paragents.fanout.recording import record_choice
from paragents.fanout.review import ReviewError, ReviewRequest, check_patch
from paragents.fanout.review import run_review as review
from paragents.fanout.specialists import parse_list
from paragents.fanout.split import Plan, Schedule, SplitError
from paragents.fanout.split import run_split as split
from paragents.lanes import LaneError
from paragents.lanes.git import git
from paragents.ui.fanout.team_screens import PlanScreen, ReviewScreen

if TYPE_CHECKING:
    from paragents.sessions import Runtime, SessionView
    from paragents.ui.app_api import AppAPI


def _runtime(app: AppAPI) -> Runtime:
    return cast("Runtime", app.runtime)


def _panel_opener(app: AppAPI, opened_ids: list[str]) -> Any:
    def opened(view: SessionView) -> None:
        opened_ids.append(view.id)
        app.run_worker(app.add_panel(view, focus=False), group="commands")

    return opened


async def _close_workers(app: AppAPI, opened_ids: list[str], what: str) -> None:
    """Close the panels of the worker sessions a run opened (they stay in /sessions), and say so."""
    closed = 0
    for sid in opened_ids:
        if sid in app.panels:
            try:
                await app.close_session(sid)
            except Exception as exc:  # the store is busy: the panel stays, and the user is told
                app.show_error(exc)
                continue
            closed += 1
    if closed:
        plural = "s" if closed != 1 else ""
        app.notify(f"Closed the {closed} {what} session{plural} (they stay in /sessions).", timeout=6)


async def _ask(app: AppAPI, screen: Any) -> Any:
    answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    def done(result: Any) -> None:
        if not answer.done():
            answer.set_result(result)

    app.show_screen(screen, done)
    return await answer


def parse_review_args(arg: str | None) -> tuple[list[str], str | None, bool]:
    """``security,test --base main --patch`` -> (["security", "test"], "main", True)."""
    words = shlex.split(arg or "")
    base: str | None = None
    patch = False
    names: list[str] = []
    i = 0
    while i < len(words):
        if words[i] == "--patch":
            patch = True
        elif words[i] == "--base" and i + 1 < len(words):
            i += 1
            base = words[i]
        elif words[i].startswith("--base="):
            base = words[i].split("=", 1)[1]
        else:
            names.extend(parse_list(words[i]))
        i += 1
    return names, base, patch


async def run_review(app: AppAPI, sid: str, arg: str | None) -> None:
    """``/review [LIST] [--base REF] [--patch]``: review the session's lane (against its base) or the
    project's ``git diff BASE`` (default HEAD) with read-only specialists; show the merged report."""
    rt = _runtime(app)
    names, base, patch = parse_review_args(arg)
    view = rt.view(sid)
    workdir = view.workdir if view.lane else rt.project_dir
    if base is None:
        lane = await rt.store.lanes.of_session(sid) if view.lane else None
        base = lane.base_commit if lane is not None else "HEAD"
    app.notify(f"Review of git diff {base} by {', '.join(names) or 'every specialist'} started.")
    request = ReviewRequest(names or None, base=base, workdir=workdir, patch=patch, keep_sessions=True)
    opened: list[str] = []
    try:
        report = await review(rt, request, _panel_opener(app, opened))
    except ReviewError as exc:
        app.notify(str(exc), title="Review", severity="error", timeout=15)
        await _close_workers(app, opened, "specialist")
        return
    apply = bool(await _ask(app, ReviewScreen(report)))
    await _close_workers(app, opened, "specialist")  # the report holds what they found
    if report.patch is None:
        return
    if not apply:
        await _review_choice(rt, report, "decline patch", applied=False)
        return
    problem = await check_patch(workdir, report.patch)
    if problem is not None:
        app.notify(f"The patch no longer applies: {problem}", severity="error")
        await _review_choice(rt, report, "apply patch", applied=False, error=problem)
        return
    try:
        applied = await git("apply", "-", cwd=workdir, stdin=report.patch, check=False)
        reason = "" if applied.ok else (applied.err or f"exit {applied.code}")
    except LaneError as exc:
        reason = str(exc)
    if reason:
        app.notify(f"git apply failed: {reason}", severity="error")
        await _review_choice(rt, report, "apply patch", applied=False, error=reason.strip())
    else:
        app.notify(f"Patch applied in {workdir}.")
        await _review_choice(rt, report, "apply patch", applied=True, workdir=str(workdir))


async def _review_choice(rt: Runtime, report: Any, action: str, **details: Any) -> None:
    """Keep the user's answer to the review's patch in the review's fan-out group."""
    if report.group_id is not None:
        state = "applied" if details.get("applied") else None
        await record_choice(rt.store.fanout, report.group_id, action, state=state, **details)


async def run_split(app: AppAPI, sid: str, prompt: str) -> None:
    """``/split PROMPT`` (``/fanout --split`` at merge): plan, show the plan for approval, run the
    subtasks in lanes and collect them into one integration lane (reviewed with /lanes)."""
    rt = _runtime(app)

    async def approve(plan: Plan, order: Schedule) -> bool:
        return bool(await _ask(app, PlanScreen(order.describe(plan))))

    app.notify("Planning the split…")
    opened: list[str] = []
    try:
        result = await split(rt, prompt, approve, on_open=_panel_opener(app, opened), keep_sessions=True)
    except SplitError as exc:
        app.notify(str(exc), title="Split", severity="error", timeout=20)
        await _close_workers(app, opened, "planner and subtask")
        return
    await _close_workers(app, opened, "planner and subtask")  # their work is in the lanes
    if result is None:
        app.notify("Split cancelled: nothing was created.")
        return
    lines = [f"{r.id}: {r.status}" + (f" ({r.detail})" if r.detail else "") for r in result.results]
    lane = result.integration
    if lane is not None:
        lines.append(f"integration lane {lane.name} (branch {lane.branch}): review it with /lanes")
    severity = "warning" if result.failed else "information"
    app.notify("\n".join(lines), title="Split finished", severity=severity, timeout=30)
