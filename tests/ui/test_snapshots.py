"""Screenshots of the main screen (1, 2, 4 panels), the approval bar and the setup screen.

Deterministic: fake runtime with fixed ids, hand-fed events, no clock, no spinner."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from paragents.events import (
    MessageAdded,
    PermissionRequested,
    SessionStateChanged,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnStarted,
    UsageUpdated,
)
from paragents.models import CallPreview, SessionState, ToolCall, Usage
from paragents.ui.app import make_app
from tests.ui.conftest import SIZE
from tests.ui.fake_runtime import FakeRuntime, make_view
from tests.ui.snapshot_app import app_with, feed, settle

ANSWER = """I found the bug in `parse()`:

```python
def parse(text: str) -> int:
    return int(text.strip())
```

| file | change |
|------|--------|
| src/parse.py | strip whitespace |
"""


def conversation(sid: str) -> list[Any]:
    call = ToolCall("c1", "edit_file", '{"path": "src/parse.py"}')
    return [
        SessionStateChanged(sid, SessionState.RUNNING),
        TurnStarted(sid, "Fix the failing test in tests/test_parse.py"),
        MessageAdded(
            sid,
            {
                "role": "assistant",
                "content": "Let me fix it.",
                "reasoning_content": "The test fails on whitespace.",
                "tool_calls": [call.to_openai()],
            },
        ),
        ToolCallStarted(sid, call, "src/parse.py"),
        ToolCallFinished(
            sid, call, "ok", "edited", "--- a/src/parse.py\n+++ b/src/parse.py\n@@ -1 +1 @@\n-x\n+y\n"
        ),
        MessageAdded(sid, {"role": "assistant", "content": ANSWER}),
        UsageUpdated(sid, Usage(3000, 400, 3400), 3400, 8192),
        SessionStateChanged(sid, SessionState.IDLE),
    ]


def test_one_panel(snap_compare: Any, tmp_path: Path) -> None:
    app, runtime = app_with(tmp_path, ["api"])

    async def before(pilot: Any) -> None:
        await settle(pilot)
        feed(runtime, conversation("s1"))
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_two_panels_one_streaming(snap_compare: Any, tmp_path: Path) -> None:
    app, runtime = app_with(tmp_path, ["api", "web"])

    async def before(pilot: Any) -> None:
        await settle(pilot)
        feed(runtime, conversation("s1"))
        feed(
            runtime,
            [
                SessionStateChanged("s2", SessionState.RUNNING),
                TurnStarted("s2", "Add a dark mode toggle"),
                TextDelta("s2", "Sure. I will add a **toggle** in `settings.tsx` and "),
                TextDelta("s2", "wire it to the theme context…"),
            ],
        )
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_four_panels(snap_compare: Any, tmp_path: Path) -> None:
    app, runtime = app_with(tmp_path, ["api", "web", "docs", "infra"])

    async def before(pilot: Any) -> None:
        await settle(pilot)
        feed(runtime, conversation("s1"))
        feed(runtime, [TurnStarted("s3", "Summarise the README"), TextDelta("s3", "The README explains…")])
        feed(runtime, [SessionStateChanged("s4", SessionState.FAILED)])
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=before)


EDIT_DIFF = "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,2 @@\n def main():\n-    print(0)\n+    print(1)"


def test_approval_bar(snap_compare: Any, tmp_path: Path) -> None:
    app, runtime = app_with(tmp_path, ["api", "web"])

    async def before(pilot: Any) -> None:
        await settle(pilot)
        call = ToolCall("c7", "write_file", '{"path": "src/app.py", "content": "print(1)"}')
        loop = asyncio.get_running_loop()
        feed(
            runtime,
            [
                SessionStateChanged("s2", SessionState.WAITING),
                TurnStarted("s2", "Create src/app.py"),
                MessageAdded("s2", {"role": "assistant", "content": "", "tool_calls": [call.to_openai()]}),
                PermissionRequested(
                    "s2",
                    "r1",
                    call,
                    "write_file src/app.py (1 lines)",
                    "Edit is not allowed by any rule (default mode asks)",
                    ("Edit(src/app.py)",),
                    loop.create_future(),
                    CallPreview("diff", EDIT_DIFF, "overwrites /work/project/src/app.py (+1 -1 lines)"),
                    None,
                    "default",
                ),
            ],
        )
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_approval_bar_armed_with_a_command(snap_compare: Any, tmp_path: Path) -> None:
    app, runtime = app_with(tmp_path, ["api"])

    async def before(pilot: Any) -> None:
        await settle(pilot)
        call = ToolCall("c8", "run_command", '{"command": "rm -rf build", "cwd": "web"}')
        preview = CallPreview("command", "rm -rf build", "bash -c", cwd="/work/project/web")
        feed(
            runtime,
            [
                SessionStateChanged("s1", SessionState.WAITING),
                PermissionRequested(
                    "s1",
                    "r2",
                    call,
                    "run_command rm -rf build (in web)",
                    "`rm -rf build` asks because of rule Bash(rm *) (ask, project)",
                    (),
                    asyncio.get_running_loop().create_future(),
                    preview,
                    "Bash(rm *)",
                    "project",
                ),
            ],
        )
        await settle(pilot)
        await pilot.press("ctrl+g")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_setup_screen(snap_compare: Any, tmp_path: Path) -> None:
    runtime = FakeRuntime([make_view("s1", "api")], tmp_path)
    app = make_app(runtime, first_run=True)

    async def before(pilot: Any) -> None:
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=before)
