"""``paragents eval run --tui``: an eval run's trials followed in the TUI (docs/eval.md, "In the TUI").

One target's runtime is the app's: each trial's sessions open as panels, their asks that the answer
policy leaves to a person (a script's ``ask``) wait in the approval bar and the inbox (f2), tagged with
the run like a fan-out group; a finished trial's panels stay (its sessions are closed and its lane
discarded) and it is a notification; the report's path is one more when the run ends. The app stays
open until the user quits; quitting earlier stops the run (the finished trials' folders stay, no
results file is written)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from paragents.eval.errors import EvalError
from paragents.eval.report import write_reports
from paragents.eval.results import RunResults, TrialResult
from paragents.eval.runner import EvalSession, Progress, RunOptions
from paragents.eval.trial import TrialSpec
from paragents.ui.app import make_app


class AppProgress(Progress):
    """Tags each trial's sessions for the inbox and notifies each finished trial."""

    def __init__(self, app: Any, runtime: Any, tag: str) -> None:
        self.app = app
        self.runtime = runtime
        self.tag = tag
        self.total = 0
        self.done = 0
        self.resolved = 0
        self.sids: dict[str, list[str]] = {}

    def start(self, specs: list[TrialSpec]) -> None:
        self.total = len(specs)

    def state(self, name: str, text: str) -> None:
        """A trial's sessions opened ("working"): tag them for the inbox and show their panels."""
        if text != "working" or name in self.sids:
            return
        tags: dict[str, str] = getattr(self.app, "eval_tags", {})
        views = [v for v in self.runtime.sessions.values() if v.name == name or v.name.startswith(f"{name}c")]
        self.sids[name] = [v.id for v in views]
        for view in views:
            tags[view.id] = self.tag
            self.app.run_worker(self.app.add_panel(view, focus=False), group="eval")
        self.app.eval_tags = tags

    def finished(self, result: TrialResult) -> None:
        """A trial ended (its sessions are closed; their panels stay, read-only, like a finished
        fan-out's): say how it went."""
        for sid in self.sids.get(result.name, []):
            self.app.eval_tags.pop(sid, None)
        self.done += 1
        self.resolved += int(result.resolved)
        mark = "error" if result.status == "error" else ("resolved" if result.resolved else "not resolved")
        self.app.notify(
            f"{result.name}: {mark} ({self.done}/{self.total}, {self.resolved} resolved)",
            title="eval",
            severity="error" if result.status == "error" else "information",
            markup=False,
        )


async def _wait_ready(app: Any) -> None:
    """Until the app restored its panels (its startup sets ``ready``; no event to await)."""
    while not getattr(app, "ready", False):
        await asyncio.sleep(0.05)


async def follow_in_app(app: Any, session: EvalSession, tag: str) -> RunResults:
    """Once the app is ready, run ``session``'s trials with their panels in ``app``, write the reports
    and say where they are."""
    run = next(iter(session.runs.values()))
    app.eval_tags = getattr(app, "eval_tags", {})
    await _wait_ready(app)
    results = await session.run(AppProgress(app, run.rt, tag))
    _md, page = write_reports(results, session.out)
    app.notify(f"eval finished: {page}", title="eval", timeout=30, markup=False)
    return results


def run_eval_tui(options: RunOptions) -> RunResults | None:
    """Run ``options`` inside the TUI (one target); return the results, or None when the user quit
    before the run ended. EvalError for more than one target."""
    if len(options.targets) != 1:
        raise EvalError("--tui follows one target at a time: give one --targets entry")

    async def main() -> RunResults | None:
        async with EvalSession(options) as session:
            run = next(iter(session.runs.values()))
            app = make_app(run.rt)
            task = asyncio.get_running_loop().create_task(
                follow_in_app(app, session, f"eval {options.tasks.name}")
            )
            try:
                await app.run_async()
            finally:
                if not task.done():
                    task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
                await app.shutdown_runtime()
            return task.result() if task.done() and not task.cancelled() and not task.exception() else None

    return asyncio.run(main())
