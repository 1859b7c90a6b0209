"""Every widget and screen module ends with a ``Demo`` app showing its states (``python -m
paragents.ui.widgets.approval_bar`` runs one). These screenshots run each demo, so a demo cannot drift
from its widget: a demo that breaks, or shows something else, fails here."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from textual.app import App

DEMO_MODULES = (
    "paragents.ui.widgets.approval_bar",
    "paragents.ui.widgets.conflict_bar",
    "paragents.ui.widgets.budget_bar",
    "paragents.ui.widgets.session_panel",
    "paragents.ui.widgets.markdown_reply",
    "paragents.ui.widgets.tool_call",
    "paragents.ui.widgets.transcript",
    "paragents.ui.widgets.prompt_input",
    "paragents.ui.widgets.empty_hint",
    "paragents.ui.widgets.ordered_input",
    "paragents.ui.inbox.screen",
    "paragents.ui.screens.overview",
    "paragents.ui.screens.setup",
    "paragents.ui.screens.sessions",
    "paragents.ui.screens.info",
    "paragents.ui.lanes.screen",
    "paragents.ui.serve.pair",
    "paragents.ui.fanout.compare",
)
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


@pytest.mark.parametrize("module", DEMO_MODULES, ids=lambda m: m.rsplit(".", 1)[-1])
def test_widget_demo(module: str, snap_compare: Any) -> None:
    assert snap_compare(demo_app(module), terminal_size=DEMO_SIZE, run_before=_settle)
