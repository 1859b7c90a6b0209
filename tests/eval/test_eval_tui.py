"""``eval run --tui``: the trials open as panels in the app, an ask the answer script leaves to a person
waits in the inbox tagged with the run, a key answers it, and the trial goes on to be scored."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from paragents.eval.answers import load_policy
from paragents.eval.runner import EvalSession
from paragents.llm.replay import ReplayServer
from paragents.ui.app import make_app
from paragents.ui.eval.hooks import follow_in_app
from paragents.ui.inbox.screen import InboxScreen
from tests.eval.conftest import needs_bwrap, sample, scripted_options
from tests.ui.conftest import SIZE, wait_until

pytestmark = needs_bwrap


async def test_an_ask_left_to_a_person_is_answered_from_the_inbox(
    solver: ReplayServer, tmp_path: Path
) -> None:
    script = tmp_path / "answers.json"
    script.write_text(
        json.dumps({"answers": [{"tool": "write_file", "answer": "ask"}], "default": "allow-safe"})
    )
    options = scripted_options(
        sample("fix-median"), tmp_path / "run", solver, policy=load_policy("script", str(script))
    )
    options.open_panel = options.interactive = True
    async with EvalSession(options) as session:
        run = next(iter(session.runs.values()))
        app = make_app(run.rt)
        async with app.run_test(size=SIZE) as pilot:
            task = asyncio.get_running_loop().create_task(follow_in_app(app, session, "eval sample"))
            names = lambda: {run.rt.sessions[sid].name for sid in app.panels if sid in run.rt.sessions}  # noqa: E731
            await wait_until(pilot, lambda: "fix-median.t1.1" in names(), "the trial's panel")
            waiting = lambda: any(v.state.value == "waiting" for v in run.rt.sessions.values())  # noqa: E731
            await wait_until(pilot, waiting, "the ask left to a person")
            app.action_inbox()
            await wait_until(
                pilot, lambda: isinstance(app.screen, InboxScreen) and len(app.screen.items) == 1, "inbox"
            )
            (item,) = app.screen.items  # type: ignore[attr-defined]
            assert item.group == "eval sample" and "write_file stats.py" in item.summary
            await pilot.press("ctrl+g", "y")
            await wait_until(pilot, task.done, "the trial's end", 120)
            results = task.result()
            (trial,) = results.trials
            assert trial.resolved
            assert (trial.burden.asks, trial.burden.left_to_person, trial.burden.auto_allows) == (1, 1, 0)
            assert (tmp_path / "run" / "report.html").is_file()
            await app.shutdown_runtime()
