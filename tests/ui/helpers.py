"""Helpers of the tests that drive the real app under Pilot: wait for its panels (``started``,
``first_panel``), read replies and toasts (``notices``), make a small git repository (``git_repo``),
find a session in a lane (``has_lane``). Typing a line is tests/typing_keys.py; the plain text a
Static shows is ``tests.ui.bars.plain``."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from paragents.ui.app import ParagentsApp
from paragents.ui.widgets.session_panel import SessionPanel
from paragents.ui.widgets.transcript import AssistantEntry
from tests.ui.conftest import wait_until


def replies(panel: SessionPanel) -> list[str]:
    return [e.content for e in panel.transcript.records if isinstance(e, AssistantEntry)]


async def started(pilot: Any, app: ParagentsApp, count: int = 1) -> list[SessionPanel]:
    """Wait for ``count`` panels with their restored history shown (it fills after the panels)."""

    def done() -> bool:
        panels = app.panels.values()
        return (
            app.ready
            and len(panels) == count
            and all(p.history_shown and not p.transcript.restore_pending for p in panels)
        )

    await wait_until(pilot, done, f"{count} panel(s) with their history")
    return list(app.panels.values())


async def first_panel(pilot: Any, app: ParagentsApp) -> SessionPanel:
    await wait_until(pilot, lambda: app.ready and len(app.panels) == 1, "the first session")
    return next(iter(app.panels.values()))


def notices(app: ParagentsApp) -> list[str]:
    """The messages of the app's toasts."""
    return [str(n.message) for n in app._notifications]


def git_repo(project: Path) -> None:
    """Make ``project`` a git repository: ``app.py`` committed on ``main``."""
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e",
    }
    (project / "app.py").write_text("def hello():\n    return 1\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run(
            ["git", *args], cwd=project, check=True, capture_output=True, env={**env, "PATH": "/usr/bin:/bin"}
        )


def has_lane(runtime: Any, name: str) -> bool:
    return any(v.name == name and v.lane for v in runtime.sessions.values())
