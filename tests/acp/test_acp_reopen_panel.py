"""The panel of a restored ACP session whose agent cannot reload its session: the stored transcript,
a read-only bar with "Start a new agent session" that only a deliberate act answers (keys typed in the
prompt never do), a prompt sent meanwhile that waits and is sent once the new agent session began."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from paragents.sessions.runtime import Runtime
from paragents.ui.app import make_app
from paragents.ui.widgets.agent_stale_bar import AgentStaleBar
from paragents.ui.widgets.transcript import AssistantEntry, TextEntry
from tests.acp.conftest import FAKE_AGENT, idle
from tests.acp.helpers import calls
from tests.typing_keys import type_line
from tests.ui.conftest import SIZE, wait_until


async def test_the_read_only_bar_starts_a_new_agent_session_and_the_waiting_prompt_goes(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    log = tmp_path / "agent.log"
    agent = {"command": sys.executable, "args": [str(FAKE_AGENT)], "env": {"FAKE_ACP_LOG": str(log)}}
    cfg = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "agents": {"fake": agent}}
    db = tmp_path / "db.sqlite"
    rt = await Runtime.create(project, cli_overrides=cfg, db_path=db)
    view = await rt.lifecycle.new_agent_session("fake", "helper")
    rt.submit(view.id, "say first answer")
    await idle(rt, view.id)
    await rt.shutdown()

    again = await Runtime.create(project, cli_overrides=cfg, db_path=db)
    app = make_app(again)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ready and view.id in app.panels, "the restored panel")
        panel = app.panels[view.id]
        await wait_until(pilot, lambda: bool(panel.query(AgentStaleBar)), "the read-only bar", timeout=90)
        bar = panel.query_one(AgentStaleBar)
        assert "cannot continue this conversation" in bar.reason
        replies = [e.content for e in panel.transcript.records if isinstance(e, AssistantEntry)]
        assert replies == ["first answer"]  # the stored transcript is shown

        await type_line(pilot, panel, "say second")
        records: list[Any] = panel.transcript.records

        def said(text: str) -> bool:
            return any(isinstance(e, TextEntry) and text in e.text for e in records)

        await wait_until(pilot, lambda: said("this prompt waits"), "the note on the waiting prompt")
        panel.prompt_box.input.focus()
        await pilot.press("n", "enter")  # typed for the prompt: never answers the bar
        await pilot.pause()
        assert panel.query(AgentStaleBar) and calls(log)[2:] == []

        await pilot.click("#agent-new")
        await wait_until(
            pilot,
            lambda: (
                not panel.query(AgentStaleBar)
                and "second" in [e.content for e in records if isinstance(e, AssistantEntry)]
            ),
            "the new agent session and the waiting prompt's reply",
            timeout=90,
        )
        assert said("a new fake session began here")
        assert calls(log)[2:4] == ["new_session", "prompt say second"]
        await again.wait_idle()
        await pilot.pause()
    await again.shutdown()
