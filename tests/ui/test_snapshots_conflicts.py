"""Screenshots and key tests of the conflict bar, the "needs you" inbox and the overview screen.

Deterministic: fake runtime with fixed ids, hand-fed events, a fixed clock (``app.clock``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from paragents.conflicts import Held
from paragents.events import (
    ConflictDetected,
    PermissionAnswer,
    PermissionRequested,
    SessionStateChanged,
    ToolCallStarted,
    TurnStarted,
    UsageUpdated,
)
from paragents.models import SessionState, ToolCall, Usage
from paragents.ui.inbox.screen import InboxScreen
from paragents.ui.screens.overview import OverviewScreen
from paragents.ui.widgets.conflict_bar import ConflictBar
from tests.ui.conftest import SIZE
from tests.ui.snapshot_app import app_with, feed, settle

NOW = 1_800_000_000.0
"""The fixed clock of these screenshots (Unix seconds)."""
DIFF = "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n def main():\n-    return 1\n+    return 2\n"


def conflict(
    sid: str, cid: str, kind: str, holder: str, since: float, *, diff: str | None = None
) -> ConflictDetected:
    call = ToolCall(f"c-{cid}", "edit_file", '{"path": "src/app.py"}')
    choices = ("reread", "run_anyway", "skip") if kind == "stale_read" else ("wait", "run_anyway", "skip")
    return ConflictDetected(
        sid,
        cid,
        call,
        "edit_file src/app.py",
        kind,  # type: ignore[arg-type]
        "/work/project/src/app.py",
        holder,
        "edit_file src/app.py" if holder else "",
        since,
        diff,
        choices,  # type: ignore[arg-type]
        asyncio.get_running_loop().create_future(),
    )


def ask(sid: str, rid: str) -> PermissionRequested:
    call = ToolCall(f"c-{rid}", "run_command", '{"command": "npm test"}')
    return PermissionRequested(
        sid, rid, call, "run_command npm test", "no rule allows it", ("Bash(npm test)",),
        asyncio.get_running_loop().create_future(),
    )  # fmt: skip


def fixed_app(tmp_path: Path, names: list[str]) -> tuple[Any, Any]:
    app, runtime = app_with(tmp_path, names)
    app.clock = lambda: NOW
    return app, runtime


async def three_waiting(pilot: Any, runtime: Any) -> list[Any]:
    """s2 waits on s1 for src/app.py; s3 has a stale read and then an approval; s1 holds the file.
    Each step is processed (settled) at its own fixed clock time."""
    app = pilot.app
    events: list[Any] = []
    app.clock = lambda: NOW - 95
    feed(runtime, [SessionStateChanged("s1", SessionState.RUNNING), TurnStarted("s1", "Refactor app.py")])
    feed(runtime, [ToolCallStarted("s1", ToolCall("c0", "run_command", "{}"), "run_command pytest -q")])
    feed(runtime, [UsageUpdated("s1", Usage(12000, 800, 12800), 12800, 32768)])
    await settle(pilot)
    app.clock = lambda: NOW - 60
    events.append(conflict("s2", "k1", "reservation", "s1", NOW - 100))
    feed(runtime, [SessionStateChanged("s2", SessionState.WAITING, "waiting on s1", "s1"), events[-1]])
    await settle(pilot)
    app.clock = lambda: NOW - 30
    events.append(conflict("s3", "k2", "stale_read", "", NOW - 300, diff=DIFF))
    feed(
        runtime, [SessionStateChanged("s3", SessionState.WAITING, "waiting on app.py", "app.py"), events[-1]]
    )
    await settle(pilot)
    app.clock = lambda: NOW - 5
    events.append(ask("s3", "r1"))
    feed(runtime, [events[-1]])
    await settle(pilot)
    app.clock = lambda: NOW
    return events


def test_conflict_bar_in_panel(snap_compare: Any, tmp_path: Path) -> None:
    app, runtime = fixed_app(tmp_path, ["api", "web"])

    async def before(pilot: Any) -> None:
        await settle(pilot)
        app.focus_panel("s2")
        feed(
            runtime,
            [
                SessionStateChanged("s2", SessionState.WAITING, "waiting on api", "api"),
                TurnStarted("s2", "Fix main"),
            ],
        )
        feed(runtime, [conflict("s2", "k1", "reservation", "api", NOW - 75)])
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_stale_read_bar(snap_compare: Any, tmp_path: Path) -> None:
    app, runtime = fixed_app(tmp_path, ["api"])

    async def before(pilot: Any) -> None:
        await settle(pilot)
        feed(runtime, [conflict("s1", "k1", "stale_read", "", NOW - 300, diff=DIFF)])
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_inbox(snap_compare: Any, tmp_path: Path) -> None:
    app, runtime = fixed_app(tmp_path, ["s1", "s2", "s3"])

    async def before(pilot: Any) -> None:
        await settle(pilot)
        await three_waiting(pilot, runtime)
        await settle(pilot)
        await pilot.press("f2")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_overview(snap_compare: Any, tmp_path: Path) -> None:
    app, runtime = fixed_app(tmp_path, ["s1", "s2", "s3"])
    since = NOW - 120
    runtime.conflicts = SimpleNamespace(
        held=lambda sid: [Held("/work/project/src/app.py", "write", "edit", since)] if sid == "s1" else []
    )

    async def before(pilot: Any) -> None:
        await settle(pilot)
        await three_waiting(pilot, runtime)
        await settle(pilot)
        await pilot.press("f3")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=before)


async def test_inbox_lists_oldest_first_and_answers_with_the_panel_keys(tmp_path: Path) -> None:
    app, runtime = fixed_app(tmp_path, ["s1", "s2", "s3"])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        events = await three_waiting(pilot, runtime)
        await settle(pilot)
        assert "2 needs you" not in app.sub_title and "3 need you" in app.sub_title
        await pilot.press("f2")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InboxScreen)
        assert [i.key for i in screen.items] == ["k1", "k2", "r1"]
        await pilot.press(*"say hi w")  # typed in the inbox: answers nothing until ctrl+g
        await settle(pilot)
        assert not any(e.reply.done() for e in events)
        await pilot.press("ctrl+g", "w")  # the oldest: s2's reservation conflict, answered "wait"
        await settle(pilot)
        assert events[0].reply.result() == "wait"
        assert [i.key for i in screen.items] == ["k2", "r1"]
        assert not app.panels["s2"].query(ConflictBar)  # the panel's bar went too
        await pilot.press("down", "y")  # moving does not arm the next bar either
        await settle(pilot)
        assert not events[2].reply.done()
        await pilot.press("ctrl+g", "y")  # skip to the approval: allow once
        await settle(pilot)
        assert events[2].reply.result() == PermissionAnswer("allow_once")
        await pilot.press("ctrl+g", "e")  # the stale read: re-read first
        await settle(pilot)
        assert events[1].reply.result() == "reread"
        assert screen.items == []


async def test_overview_enter_focuses_the_session(tmp_path: Path) -> None:
    app, runtime = fixed_app(tmp_path, ["s1", "s2", "s3"])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await three_waiting(pilot, runtime)
        await settle(pilot)
        await pilot.press("f3")
        await settle(pilot)
        assert isinstance(app.screen, OverviewScreen)
        await pilot.press("down", "down", "enter")
        await settle(pilot)
        assert not isinstance(app.screen, OverviewScreen) and app.active_sid == "s3"


async def test_conflict_bar_keys_resolve_only_offered_choices(tmp_path: Path) -> None:
    app, runtime = fixed_app(tmp_path, ["api"])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        event = conflict("s1", "k1", "reservation", "web", NOW - 5)
        feed(runtime, [event])
        await settle(pilot)
        app.focus_panel("s1")
        await pilot.press("r")  # typed into the prompt: answers nothing
        await settle(pilot)
        assert not event.reply.done() and app.panels["s1"].prompt_box.input.value == "r"
        await pilot.press("ctrl+g", "e")  # re-read is not offered for a reservation conflict
        await settle(pilot)
        assert not event.reply.done()
        await pilot.press("r")
        await settle(pilot)
        assert event.reply.result() == "run_anyway"
        assert not app.panels["s1"].query(ConflictBar)
