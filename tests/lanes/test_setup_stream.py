"""Pilot test: a new lane's setup output streams into the panel it was asked from while the setup
runs; a failing setup removes the lane (no worktree, branch or row left) and keeps its output, both
in the panel and in a log file."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rich.console import Console

from paragents.lanes.repo import lane_path
from paragents.llm.replay import ReplayServer
from paragents.ui.app import make_app
from tests.lanes.conftest import commit_all, sh
from tests.ui import conftest as ui_fixtures
from tests.ui.conftest import SIZE, wait_until
from tests.ui.helpers import notices

replay = ui_fixtures.replay
make_runtime = ui_fixtures.make_runtime

SETUP = """setup = [
  "echo started",
  "case \\"$PWD\\" in */bad) echo failing now; exit 3;; esac",
  "while [ ! -f go ]; do sleep 0.05; done",
  "echo finished",
]
"""
"""The setup runs in the lane's sandbox (the lane writable; a private /tmp, so a main checkout under
/tmp is not visible there): it waits for ``go`` in the lane itself, and the lane ``bad`` fails."""


def _text(widget: Any) -> str:
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(widget.render())
    return console.export_text()


async def test_setup_streams_into_the_panel_and_a_failing_one_leaves_nothing(
    make_runtime: Any, replay: ReplayServer, tmp_path: Path
) -> None:
    from paragents.ui.widgets.setup_log import SetupLog

    project = tmp_path / "project"
    sh(project, "init", "-q", "-b", "main")
    (project / ".gitignore").write_text("go\nfail\n")
    (project / ".paragents").mkdir()
    (project / ".paragents" / "worktree.toml").write_text(SETUP)
    commit_all(project, "init")
    runtime = await make_runtime()
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ready and len(app.panels) == 1, "the first panel")
        first = next(iter(app.panels.values()))
        await pilot.press(*"/new api --lane", "enter")
        await wait_until(
            pilot, lambda: any("started" in log.lines for log in first.query(SetupLog)), "streamed output"
        )
        assert len(app.panels) == 1  # still setting up: the output came while it ran
        (lane_path(project.resolve(), "api") / "go").write_text("")
        await wait_until(pilot, lambda: len(app.panels) == 2, "the lane's panel")
        await wait_until(pilot, lambda: not first.query(SetupLog), "the log goes once the lane is ready")

        assert app.active_sid is not None
        first = app.panels[app.active_sid]  # the api panel now has focus: /new is typed there
        await pilot.press(*"/new bad --lane", "enter")
        await wait_until(pilot, lambda: any("exited with 3" in t for t in notices(app)), "the failure")
        await wait_until(pilot, lambda: bool(first.query(SetupLog)), "the kept log")
        [log] = first.query(SetupLog)
        assert log.lines[:3] == ["$ echo started", "started", log.lines[2]] and "failing now" in log.lines
        assert log.has_class("-failed") and "setup failed" in _text(log.query_one(".setup-heading"))
        [toast] = [t for t in notices(app) if "exited with 3" in t]
        kept = Path(toast.split("output kept in ")[1].split(")")[0])
        assert "failing now" in kept.read_text()
        assert len(app.panels) == 2
        assert "paragents/bad" not in sh(project, "branch", "--list")
        assert sh(project, "worktree", "list").count("\n") == 1  # main checkout and api only
        assert [lane.name for lane in await runtime.store.lanes.all()] == ["api"]
        await app.shutdown_runtime()
