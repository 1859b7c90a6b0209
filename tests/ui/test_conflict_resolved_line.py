"""A resolved conflict leaves one plain line in its panel's transcript saying how it ended (TODO:
"a resolved conflict leaves no line"). The real app and runtime are driven by the demo test
(tests/demo/test_demo_interactive.py: "run anyway"); here a panel is fed each way it can end."""

from __future__ import annotations

import asyncio

import pytest

from paragents.events import ConflictDetected, ConflictResolved
from paragents.models import ToolCall
from paragents.ui.widgets.session_panel import SessionPanel
from paragents.ui.widgets.transcript import TextEntry
from tests.ui.conftest import SIZE
from tests.ui.feeding import feed
from tests.ui.panel_app import PanelApp


def conflict(cid: str = "k1", holder: str = "notes") -> ConflictDetected:
    call = ToolCall("c1", "edit_file", '{"path": "README.md"}')
    return ConflictDetected(
        "s1", cid, call, "edit_file README.md", "reservation", "/work/p/README.md", holder,
        "write_file README.md", 0.0, None, ("wait", "run_anyway", "skip"),
        asyncio.get_running_loop().create_future(),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("answer", "by", "said"),
    [
        ("run_anyway", "user", "Conflict on /work/p/README.md resolved: run anyway."),
        ("skip", "user", "Conflict on /work/p/README.md resolved: skipped (the model was told why)."),
        (
            "wait",
            "user",
            "Conflict on /work/p/README.md resolved: notes finished, the call ran (you chose wait).",
        ),
        ("wait", "auto", "Conflict on /work/p/README.md resolved: notes finished, the call ran."),
        (
            "skip",
            "unattended",
            "Conflict on /work/p/README.md resolved: skipped (the model was told why), as nobody "
            "answered in time.",
        ),
        (
            "run_anyway",
            "http: phone",
            "Conflict on /work/p/README.md resolved: run anyway, answered by http: phone.",
        ),
        (
            "cancelled",
            "cancelled",
            "Conflict on /work/p/README.md resolved: the turn was cancelled, the call did not run.",
        ),
    ],
)
async def test_a_resolved_conflict_leaves_one_line_saying_how(answer: str, by: str, said: str) -> None:
    app = PanelApp()
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(SessionPanel)
        await feed(panel, conflict())
        await pilot.pause()
        assert panel.conflict_bar is not None
        await feed(panel, ConflictResolved("s1", "k1", answer, by))
        await pilot.pause()
        assert panel.conflict_bar is None
        lines = [e.text for e in panel.transcript.records if isinstance(e, TextEntry)]
        assert lines[-1:] == [said]
