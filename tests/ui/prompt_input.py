"""Terminal input for the prompt box: ``feed`` a chunk as one terminal read (every key at once, as the
driver's input thread delivers it) once the app has ``started`` with the prompt focused."""

from __future__ import annotations

from typing import Any

from textual._xterm_parser import XTermParser

from paragents.ui.widgets.prompt_area import PromptArea
from tests.ui.conftest import wait_until


def feed(app: Any, chunk: str) -> None:
    """Deliver ``chunk`` as one terminal read: parse it and hand every event to the driver at once,
    as the driver's input thread does (no pause between the keys)."""
    parser = XTermParser()
    events = [*parser.feed(chunk), *parser.feed("")]  # the empty feed flushes a lone trailing ESC
    for event in events:
        app._driver.process_message(event)


async def started(pilot: Any, app: Any) -> PromptArea:
    await wait_until(pilot, lambda: app.ready and bool(app.panels), "startup")
    area = app.panels[app.active_sid].prompt_box.input
    await wait_until(pilot, lambda: app.focused is area, "the prompt focused")
    return area
