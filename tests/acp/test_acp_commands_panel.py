"""An ACP session's own slash commands in the TUI: typing "/" in its prompt box offers the agent's
commands (marked with its name, shown literally) and not in another session's box; "/name args" and
"//name args" reach the agent as the prompt; ``/mode`` switches the agent's mode, shown in the title."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from textual.widgets import Static

from paragents.sessions.runtime import Runtime
from paragents.ui.app import make_app
from paragents.ui.widgets.session_panel import SessionPanel
from paragents.ui.widgets.transcript import AssistantEntry
from tests.acp.conftest import FAKE_AGENT
from tests.typing_keys import type_line
from tests.ui.conftest import SIZE, wait_until


def hint(panel: SessionPanel) -> str:
    shown = panel.prompt_box.query_one(".hint", Static)
    return str(shown.render()) if shown.has_class("-shown") else ""


def replies(panel: SessionPanel) -> list[str]:
    return [e.content for e in panel.transcript.records if isinstance(e, AssistantEntry)]


async def test_typing_slash_offers_the_agents_commands_and_sends_them_to_it(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    commands = [["init", "make AGENTS.md"], ["review", "the agent's review"], ["[b]x[/b]", "[red]boom[/red]"]]
    env = {"FAKE_ACP_COMMANDS": json.dumps(commands), "FAKE_ACP_MODES": "1"}
    agent = {"command": sys.executable, "args": [str(FAKE_AGENT)], "env": env}
    cfg = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "agents": {"fake": agent}}
    rt = await Runtime.create(project, cli_overrides=cfg, db_path=tmp_path / "db.sqlite")
    app = make_app(rt)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ready and len(app.panels) == 1, "the first session")
        first = next(iter(app.panels.values()))
        await type_line(pilot, first, "/new --agent fake helper")
        await wait_until(pilot, lambda: len(app.panels) == 2, "the agent's panel")
        panel = app.panels[app.active_sid or ""]
        box = panel.prompt_box
        await wait_until(pilot, lambda: box.agent is not None and bool(box.agent.commands), "its commands")
        box.input.focus()
        await pilot.press("slash")
        await wait_until(pilot, lambda: "/init" in hint(panel), "the completion")
        shown = hint(panel)
        assert "/init  make AGENTS.md · fake" in shown
        assert "/[b]x[/b]  [red]boom[/red] · fake" in shown  # the agent's text, literally
        await pilot.press("i")  # "/i": the agent's /init is listed first, so it is the one suggested
        await wait_until(pilot, lambda: box.input.suggestion == "nit", "the inline suggestion (/init)")
        assert hint(panel).splitlines()[0].startswith("/init")  # (paragents' /inbox comes after it)
        await pilot.press("n", "i")
        await wait_until(pilot, lambda: box.input.suggestion == "t", "the inline suggestion")
        box.input.value = ""

        first.prompt_box.input.focus()
        await pilot.press("slash")
        await wait_until(pilot, lambda: bool(hint(first)), "the other session's completion")
        assert "/init" not in hint(first) and "· fake" not in hint(first)
        first.prompt_box.input.value = ""

        await type_line(pilot, panel, "/init fast please")
        await wait_until(pilot, lambda: "command: /init fast please" in replies(panel), "the agent's answer")
        await type_line(pilot, panel, "//review the diff")
        await wait_until(pilot, lambda: "command: /review the diff" in replies(panel), "its /review")
        assert "fake mode Code" in panel.title_text().plain
        await type_line(pilot, panel, "/mode plan")
        await wait_until(pilot, lambda: "fake mode Plan" in panel.title_text().plain, "the mode in the title")
        assert panel.mode == "default"
        await rt.wait_idle()
        await pilot.pause()
    await rt.shutdown()
