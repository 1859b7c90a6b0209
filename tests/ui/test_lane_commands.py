"""Pilot test of lanes in the app: `/new NAME --lane` opens a panel working in its own worktree (no
crash from notes arriving before the panel is mounted) and `/lane` shows the lanes as plain text."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from paragents.llm.replay import ReplayServer
from paragents.ui.app import make_app
from tests.ui.bars import plain
from tests.ui.conftest import SIZE, wait_until
from tests.ui.helpers import git_repo, has_lane, notices


async def test_new_lane_then_lane_report(make_runtime: Any, replay: ReplayServer, tmp_path: Path) -> None:
    git_repo(tmp_path / "project")
    runtime = await make_runtime()
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ready and len(app.panels) == 1, "the first panel")
        await pilot.press(*"/new api --lane", "enter")
        await wait_until(pilot, lambda: len(app.panels) == 2, "the lane's panel")
        view = next(v for v in runtime.sessions.values() if v.name == "api")
        assert view.lane == "api" and view.workdir == view.sandbox_root != tmp_path / "project"
        await wait_until(
            pilot, lambda: any("working in lane api" in t for t in notices(app)), "the lane note"
        )
        await pilot.press(*"/lane", "enter")
        await wait_until(
            pilot, lambda: any(t.startswith("this session works in lane api") for t in notices(app)), "/lane"
        )
        assert any("ports 41000-41009" in t for t in notices(app))
        await app.shutdown_runtime()


async def test_lanes_review_screen_shows_commits_and_the_diff(
    make_runtime: Any, replay: ReplayServer, tmp_path: Path
) -> None:
    from textual.widgets import OptionList, Static

    from paragents.ui.lanes.screen import LanesScreen

    git_repo(tmp_path / "project")
    runtime = await make_runtime()
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ready and len(app.panels) == 1, "the first panel")
        for name in ("api", "web"):
            await pilot.press(*f"/new {name} --lane", "enter")
            await wait_until(pilot, partial(has_lane, runtime, name), name)
        web = next(v for v in runtime.sessions.values() if v.name == "web")
        (web.workdir / "app.py").write_text("def hello():\n    return '[red]web[/red]'\n")
        await pilot.press(*"/lanes", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, LanesScreen), "the Lanes screen")
        assert "0 file(s) changed" in plain(app.screen.query_one("#lane-body", Static))
        await pilot.press("down")
        await pilot.pause()
        text = plain(app.screen.query_one("#lane-body", Static))
        assert app.screen.query_one(OptionList).highlighted == 1
        assert "1 file(s) changed" in text and "app.py  +1 -1" in text
        assert "[red]web[/red]" in text  # file content shown as text, never as markup
        await pilot.press("escape")
        await app.shutdown_runtime()
