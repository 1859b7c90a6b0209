"""An ACP session in the TUI: ``/new --agent NAME`` opens a panel that renders the agent like any
session (its reply, its tool call, the policy's refusal); a missing agent names its install command."""

from __future__ import annotations

import sys
from pathlib import Path

from paragents.sessions.runtime import Runtime
from paragents.ui.app import ParagentsApp, make_app
from paragents.ui.widgets.tool_call import ToolEntry
from paragents.ui.widgets.transcript import AssistantEntry, TextEntry
from tests.acp.conftest import FAKE_AGENT
from tests.typing_keys import type_line
from tests.ui.conftest import SIZE, wait_until


def notices(app: ParagentsApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_new_agent_opens_a_panel_that_renders_the_agent(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    agent = {"command": sys.executable, "args": [str(FAKE_AGENT)]}
    cfg = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "agents": {"fake": agent}}
    rules = {"deny": ["Bash(rm *)"]}
    rt = await Runtime.create(project, cli_overrides=cfg, db_path=tmp_path / "db.sqlite", cli_rules=rules)
    app = make_app(rt)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ready and len(app.panels) == 1, "the first session")
        first = next(iter(app.panels.values()))
        await type_line(pilot, first, "/new --agent nope")
        await wait_until(pilot, lambda: any("unknown agent 'nope'" in n for n in notices(app)), "the error")
        await type_line(pilot, first, "/new --agent fake helper")
        await wait_until(pilot, lambda: len(app.panels) == 2, "the agent's panel")
        panel = app.panels[app.active_sid or ""]
        await wait_until(pilot, lambda: bool(panel.prompt_box.query("QueueList")), "the panel's prompt box")
        assert "acp:fake" in panel.title_text().plain and "helper" in panel.title_text().plain
        await type_line(pilot, panel, "say hello there\nrun rm x.txt")
        records = panel.transcript.records
        await wait_until(
            pilot,
            lambda: panel.state.value == "idle" and any(isinstance(e, ToolEntry) for e in records),
            "the turn",
        )
        replies = [e.content for e in records if isinstance(e, AssistantEntry)]
        assert "hello there" in replies and "rejected" in replies
        [tool] = [e for e in records if isinstance(e, ToolEntry)]
        assert tool.status == "denied"  # the deny rule stopped it: shown as denied, not an error
        texts = [e.text for e in records if isinstance(e, TextEntry)]
        assert any("denied by policy: rm x.txt" in t for t in texts)
        assert not panel.pending  # the deny rule answered; nobody was asked
        await rt.wait_idle()  # the scheduler's last events reach the panel before the app closes
        await pilot.pause()
    await rt.shutdown()
