"""The app over the FakeRuntime (tests/ui/fake_runtime.py) for screenshots: ``app_with`` named
sessions, ``feed`` it events, ``settle`` it before a screenshot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from paragents.ui.app import ParagentsApp, make_app
from tests.ui.conftest import wait_until
from tests.ui.fake_runtime import FakeRuntime, make_view


def app_with(tmp_path: Path, names: list[str]) -> tuple[ParagentsApp, FakeRuntime]:
    views = [make_view(f"s{i + 1}", name) for i, name in enumerate(names)]
    runtime = FakeRuntime(views, tmp_path)
    return make_app(runtime), runtime


async def settle(pilot: Any) -> None:
    app = pilot.app
    # A condition, not a count of pauses: 200 pauses were not always enough on a loaded machine, and
    # the screenshot was then taken of an app still starting.
    await wait_until(pilot, lambda: bool(app.ready), "the app to be ready")
    await app.workers.wait_for_complete()
    await pilot.pause()
    for panel in app.panels.values():
        panel.flush()
    await pilot.pause()


def feed(runtime: FakeRuntime, events: list[Any]) -> None:
    for event in events:
        runtime.emit(event)
