"""Issue 30 item 5 for external agents: after a restart an ACP agent's tool entries read as they did
live, with the agent's own title ("Run echo ...", "Edit notes.txt": set by a later update), not the raw
input it sent. The fake agent (tests/acp/fake_agent.py) as a subprocess, a real Runtime and the app,
restarted on the same store."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from paragents.sessions.runtime import Runtime
from paragents.ui.app import make_app
from paragents.ui.widgets.tool_call import ToolEntry
from tests.acp.conftest import FAKE_AGENT, idle
from tests.patience import HANG_GUARD_S
from tests.typing_keys import type_line
from tests.ui.conftest import SIZE, wait_until


def rows(panel: Any) -> list[tuple[str, str]]:
    return [(e.summary, e.status) for e in panel.transcript.records if isinstance(e, ToolEntry)]


async def test_an_agents_tool_rows_keep_its_titles_after_a_restart(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    agent = {"command": sys.executable, "args": [str(FAKE_AGENT)]}
    cfg = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "agents": {"fake": agent}}
    rules = {"allow": ["Bash(echo *)", "Edit"]}
    db = tmp_path / "db.sqlite"

    rt = await Runtime.create(project, cli_overrides=cfg, db_path=db, cli_rules=rules)
    app = make_app(rt)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ready and len(app.panels) == 1, "the first session")
        first = next(iter(app.panels.values()))
        await type_line(pilot, first, "/new --agent fake helper")
        await wait_until(pilot, lambda: len(app.panels) == 2, "the agent's panel")
        sid = app.active_sid or ""
        panel = app.panels[sid]
        await wait_until(pilot, lambda: bool(panel.prompt_box.query("QueueList")), "the panel's prompt box")
        rt.submit(sid, f"run echo restored-rows\nedit {project / 'notes.txt'} hello")
        await idle(rt, sid)
        await wait_until(
            pilot, lambda: [s for _, s in rows(panel)] == ["ok", "ok"], "both rows done", HANG_GUARD_S
        )
        live = rows(panel)
        await rt.wait_idle()
        await pilot.pause()
    await rt.shutdown()
    assert live[0][0].startswith("Run echo restored-rows"), live
    assert "Edit" in live[1][0] and "notes.txt" in live[1][0], live
    assert not any("command=" in s or "filePath" in s for s, _ in live)

    again = await Runtime.create(project, cli_overrides=cfg, db_path=db, cli_rules=rules)
    app = make_app(again)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ready and sid in app.panels, "the restored panel")
        panel = app.panels[sid]
        await wait_until(pilot, lambda: len(rows(panel)) == 2, "the restored rows")
        assert rows(panel) == live  # the agent's titles, as shown live
    await again.shutdown()
