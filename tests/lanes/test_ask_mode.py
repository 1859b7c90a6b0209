"""Pilot test of ``lanes: "ask"``: a new session that would share the checkout with a session that
writes there is asked about inline, in the focused panel; the bar answers only after the deliberate
act (ctrl+g or a click): ``l`` opens it in a lane, "Share the checkout" opens it in the checkout."""

from __future__ import annotations

from pathlib import Path

from paragents.llm.replay import ReplayServer
from paragents.sessions.runtime import Runtime
from paragents.ui.app import make_app
from tests.lanes.conftest import commit_all, sh
from tests.ui import conftest as ui_fixtures
from tests.ui.conftest import SIZE, wait_until

replay = ui_fixtures.replay


async def test_ask_mode_asks_inline_and_answers_only_deliberately(
    replay: ReplayServer, tmp_path: Path
) -> None:
    from paragents.ui.widgets.lane_ask_bar import LaneAskBar

    project = tmp_path / "project"
    project.mkdir()
    sh(project, "init", "-q", "-b", "main")
    (project / "app.py").write_text("x = 1\n")
    commit_all(project, "init")
    overrides = {"base_url": replay.base_url, "model": "m", "lanes": "ask"}
    runtime = await Runtime.create(project, cli_overrides=overrides, db_path=tmp_path / "db.sqlite")
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ready and len(app.panels) == 1, "the first panel")
        first = next(iter(app.panels.values()))
        await pilot.press(*"/new two", "enter")
        await wait_until(pilot, lambda: bool(first.query(LaneAskBar)), "the lane question")
        bar = first.query_one(LaneAskBar)
        assert not bar.armed and len(app.panels) == 1
        await pilot.press("l")  # typed into the prompt: answers nothing
        await pilot.pause()
        assert first.query(LaneAskBar) and len(app.panels) == 1
        assert first.prompt_box.input.text == "l"
        await pilot.press("backspace", "ctrl+g")
        assert bar.armed
        await pilot.press("l")
        await wait_until(pilot, lambda: len(app.panels) == 2, "the new session")
        two = next(v for v in runtime.sessions.values() if v.name == "two")
        assert two.lane == "two" and "[paragents/two]" in sh(project, "worktree", "list")
        assert not first.query(LaneAskBar)

        assert app.active_sid is not None
        focused = app.panels[app.active_sid]  # two's panel; "first" still writes in the checkout
        await pilot.press(*"/new three", "enter")
        await wait_until(pilot, lambda: bool(focused.query(LaneAskBar)), "asked again")
        await pilot.click("#share")
        await wait_until(pilot, lambda: len(app.panels) == 3, "the third session")
        three = next(v for v in runtime.sessions.values() if v.name == "three")
        assert three.lane is None and three.workdir == project
        await app.shutdown_runtime()
