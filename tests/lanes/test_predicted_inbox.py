"""Pilot test: two scripted sessions in two lanes edit the same function; before either merges, the
predicted conflict is an inbox (f2) item tagged "predicted conflict" and both panels' titles say it;
its bar shows both sides, asks a lane's agent to adapt, dismisses; a prediction that no longer holds
clears both."""

from __future__ import annotations

import io
import json
from functools import partial
from pathlib import Path
from typing import Any

from rich.console import Console

from paragents.llm.replay import ReplayServer, ScriptedResponse
from paragents.ui.app import make_app
from tests.lanes.conftest import commit_all, sh
from tests.ui import conftest as ui_fixtures
from tests.ui.conftest import SIZE, wait_until
from tests.ui.helpers import has_lane

replay = ui_fixtures.replay
make_runtime = ui_fixtures.make_runtime


def _shown(renderable: Any) -> str:
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def _write(server: ReplayServer, session: str, body: str) -> None:
    args = json.dumps({"path": "app.py", "content": f"def hello():\n    {body}\n"})
    call = {"id": "w", "name": "write_file", "arguments": args}
    server.add(ScriptedResponse.from_message(tool_calls=[call]), session=session)
    server.add(ScriptedResponse.from_message(content="edited"), session=session)


async def test_inbox_shows_the_predicted_conflict_before_either_merges(
    make_runtime: Any, replay: ReplayServer, tmp_path: Path
) -> None:
    from paragents.ui.inbox.screen import InboxScreen
    from paragents.ui.lanes.prediction import SidesScreen
    from paragents.ui.widgets.prediction_bar import PredictionBar

    project = tmp_path / "project"
    sh(project, "init", "-q", "-b", "main")
    (project / "app.py").write_text("def hello():\n    return 1\n")
    commit_all(project, "init")
    runtime = await make_runtime()
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ready and len(app.panels) == 1, "the first panel")
        for name in ("api", "web"):
            await pilot.press(*f"/new {name} --lane", "enter")
            await wait_until(pilot, partial(has_lane, runtime, name), name)
        views = {v.name: v for v in runtime.sessions.values() if v.lane}
        runtime.lane_watcher.debounce = 0
        for name, body in (("api", "return 'api'"), ("web", "return 'web'")):
            await runtime.controls.set_mode(views[name].id, "acceptEdits")
            _write(replay, name, body)
            runtime.submit(views[name].id, "change hello")
            await runtime.wait_idle(views[name].id)
        api, web = app.panels[views["api"].id], app.panels[views["web"].id]
        await wait_until(pilot, lambda: bool(api.lane_conflicts and web.lane_conflicts), "the prediction")
        assert "conflicts with web in app.py" in _shown(api.title_text())
        assert "conflicts with api in app.py" in _shown(web.title_text())
        assert sh(project, "log", "--format=%s") == "init"  # neither merged nor committed

        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, InboxScreen), "the inbox")
        inbox = app.screen
        assert isinstance(inbox, InboxScreen)
        [item] = inbox.items
        assert item.kind == "predicted conflict"
        assert item.summary == "api conflicts with web in app.py (neither has merged yet)"
        assert "predicted conflict" in _shown(inbox._list_text())
        assert not inbox.query_one(PredictionBar).armed
        await pilot.press("v")  # not armed: the key does nothing
        await pilot.pause()
        assert isinstance(app.screen, InboxScreen)

        await pilot.press("ctrl+g", "v")
        await wait_until(pilot, lambda: isinstance(app.screen, SidesScreen), "both sides")
        sides = app.screen
        assert isinstance(sides, SidesScreen)
        assert sides.sides[0][0].startswith("lane api")
        diffs = [diff for _, diff in sides.sides]
        assert "+    return 'api'" in diffs[0] and "+    return 'web'" in diffs[1]
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is inbox, "back in the inbox")

        replay.add(ScriptedResponse.from_message(content="adapted"), session="api")
        await pilot.press("ctrl+g", "a")
        await wait_until(
            pilot,
            lambda: any(
                "Conflicting file(s) with lane web: app.py" in str(m.get("content"))
                for m in runtime.sessions[views["api"].id].messages
            ),
            "the adapt prompt reached api's agent",
        )
        await runtime.wait_idle(views["api"].id)

        await pilot.press("ctrl+g", "d")
        await wait_until(pilot, lambda: not inbox.items, "dismissed")
        assert not api.lane_conflicts and "conflicts with" not in _shown(web.title_text())
        await runtime.lane_watcher.run_round()  # still predicted, still dismissed
        await pilot.pause()
        assert not inbox.items and not api.lane_conflicts

        (Path(views["web"].workdir) / "app.py").write_text("def hello():\n    return 'WEB'\n")
        await runtime.lane_watcher.run_round()  # same files: still dismissed
        assert not inbox.items
        for name in ("api", "web"):
            (Path(views[name].workdir) / "util.py").write_text(f"who = {name!r}\n")
        await runtime.lane_watcher.run_round()  # the prediction changed (one more file): shown again
        await wait_until(pilot, lambda: len(inbox.items) == 1 and bool(web.lane_conflicts), "shown again")

        assert inbox.items[0].summary == "api conflicts with web in app.py, util.py (neither has merged yet)"
        (Path(views["web"].workdir) / "app.py").write_text("def hello():\n    return 1\n")
        (Path(views["web"].workdir) / "util.py").unlink()
        await runtime.lane_watcher.run_round()  # no longer holds: both cleared
        await wait_until(pilot, lambda: not inbox.items, "cleared from the inbox")
        assert not api.lane_conflicts and not web.lane_conflicts
        assert "conflicts with" not in _shown(api.title_text())
        await pilot.press("escape")
        await pilot.press("f3")  # the overview lists the lanes with their ports
        await wait_until(
            pilot, lambda: "api" in _shown(app.screen.query_one("#overview-lanes").render()), "lanes"
        )
        lanes = _shown(app.screen.query_one("#overview-lanes").render())
        assert "ports 41000-41009  session api" in lanes and "ports 41010-41019  session web" in lanes
        await pilot.press("escape")
        await app.shutdown_runtime()
