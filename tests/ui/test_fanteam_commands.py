"""Pilot test of /review and /decide in the app: /review opens a read-only panel per specialist and
ends in the report screen listing the merged finding once (closing the specialists' panels after);
/decide reaches the next request's system prompt of another session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual.widgets import Static

from paragents.llm.replay import ReplayServer, ScriptedResponse
from paragents.sessions.factory import opened
from paragents.ui.app import make_app
from paragents.ui.fanout.team_screens import ReviewScreen
from tests.ui.conftest import SIZE, wait_until
from tests.ui.helpers import git_repo

FINDING = {"file": "app.py", "line": 2, "severity": "high", "title": "returns 2", "evidence": "return 2"}


async def test_review_shows_the_merged_report(
    make_runtime: Any, replay: ReplayServer, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    git_repo(project)
    (project / "app.py").write_text("def hello():\n    return 2\n")
    for name in ("security", "code"):
        replay.add(
            ScriptedResponse.from_message(content=json.dumps({"findings": [FINDING]})),
            session=f"review-{name}",
        )
    runtime = await make_runtime()
    app = make_app(opened(runtime))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ready and len(app.panels) == 1, "the first panel")
        await pilot.press(*"/review security,code", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ReviewScreen), "the review report")
        shown = "\n".join(str(s.render()) for s in app.screen.query(Static))
        assert shown.count("app.py:2") == 1 and "returns 2  (security, code)" in shown
        await wait_until(pilot, lambda: len(app.panels) == 3, "a panel per specialist")
        assert sorted(v.mode for v in runtime.sessions.values() if v.name.startswith("review-")) == [
            "plan",
            "plan",
        ]
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ReviewScreen), "the report closed")
        # done: the specialists' panels close (their sessions stay in /sessions)
        await wait_until(pilot, lambda: len(app.panels) == 1, "the specialist panels closed")
        stored = [s.name for s in await runtime.store.sessions.all(runtime.project_dir)]
        assert sum(name.startswith("review-") for name in stored) == 2
        await app.shutdown_runtime()


async def test_decide_reaches_the_next_system_prompt(make_runtime: Any, replay: ReplayServer) -> None:
    replay.add(ScriptedResponse.from_message(content="ok"))
    runtime = await make_runtime()
    app = make_app(opened(runtime))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ready and len(app.panels) == 1, "the first panel")
        await pilot.press(*"/decide Tabs are never used", "enter")
        await wait_until(
            pilot, lambda: any("Decision recorded" in str(n.message) for n in app._notifications), "ok"
        )
        await pilot.press(*"hello", "enter")
        await wait_until(pilot, lambda: len(replay.requests) == 1, "the request")
        system = replay.requests[0].body_json["messages"][0]["content"]
        assert "Project decisions" in system and "- Tabs are never used (user@" in system
        await app.shutdown_runtime()
