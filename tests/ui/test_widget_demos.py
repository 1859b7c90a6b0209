"""Every widget and screen module ends with a ``Demo`` app showing its states (``python -m
paragents.ui.widgets.approval_bar`` runs one). These screenshots run each demo, so a demo cannot drift
from its widget: a demo that breaks, or shows something else, fails here."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from textual.app import App

DEMO_MODULES = {
    # snapshot name (the __snapshots__ file) -> the module whose Demo it shows
    "approval_bar": "paragents.ui.widgets.approval_bar",
    "conflict_bar": "paragents.ui.widgets.conflict_bar",
    "budget_bar": "paragents.ui.widgets.budget_bar",
    "session_panel": "paragents.ui.widgets.session_panel",
    "markdown_reply": "paragents.ui.widgets.markdown_reply",
    "tool_call": "paragents.ui.widgets.tool_call",
    "transcript": "paragents.ui.widgets.transcript",
    "prompt_input": "paragents.ui.widgets.prompt_input",
    "empty_hint": "paragents.ui.widgets.empty_hint",
    "ordered_input": "paragents.ui.widgets.ordered_input",
    "inbox": "paragents.ui.inbox.screen",
    "overview": "paragents.ui.screens.overview",
    "setup": "paragents.ui.screens.setup",
    "sessions": "paragents.ui.screens.sessions",
    "info": "paragents.ui.screens.info",
    "lanes": "paragents.ui.lanes.screen",
    "pair": "paragents.ui.serve.pair",
    "compare": "paragents.ui.fanout.compare",
}
DEMO_SIZE = (120, 32)


async def _settle(pilot: Any) -> None:
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def demo_app(module: str) -> App[None]:
    demo = importlib.import_module(module).Demo
    app = demo()
    assert isinstance(app, App)
    return app


@pytest.mark.parametrize("module", list(DEMO_MODULES.values()), ids=list(DEMO_MODULES))
def test_widget_demo(module: str, snap_compare: Any) -> None:
    assert snap_compare(demo_app(module), terminal_size=DEMO_SIZE, run_before=_settle)
