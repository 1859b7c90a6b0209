"""Pilot test of lanes in the app: `/new NAME --lane` opens a panel working in its own worktree (no
crash from notes arriving before the panel is mounted) and `/lane` shows the lanes as plain text."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from paragents.llm.replay import ReplayServer
from paragents.ui.app import make_app
from tests.ui.conftest import SIZE, wait_until


def _git_repo(project: Path) -> None:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e",
    }
    (project / "app.py").write_text("def hello():\n    return 1\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run(
            ["git", *args], cwd=project, check=True, capture_output=True, env={**env, "PATH": "/usr/bin:/bin"}
        )


def _toasts(app: Any) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_new_lane_then_lane_report(make_runtime: Any, replay: ReplayServer, tmp_path: Path) -> None:
    _git_repo(tmp_path / "project")
    runtime = await make_runtime()
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ready and len(app.panels) == 1, "the first panel")
        await pilot.press(*"/new api --lane", "enter")
        await wait_until(pilot, lambda: len(app.panels) == 2, "the lane's panel")
        view = next(v for v in runtime.sessions.values() if v.name == "api")
        assert view.lane == "api" and view.workdir == view.sandbox_root != tmp_path / "project"
        await wait_until(
            pilot, lambda: any("working in lane api" in t for t in _toasts(app)), "the lane note"
        )
        await pilot.press(*"/lane", "enter")
        await wait_until(
            pilot, lambda: any(t.startswith("this session works in lane api") for t in _toasts(app)), "/lane"
        )
        assert any("ports 41000-41009" in t for t in _toasts(app))
        await app.shutdown_runtime()
