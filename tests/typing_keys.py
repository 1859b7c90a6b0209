"""Typing into the real app under Pilot (tests/ui, tests/acp): ``type_line`` sends one line from a
panel's prompt box, as a user typing it and pressing enter."""

from __future__ import annotations

from typing import Any

from paragents.ui.widgets.session_panel import SessionPanel


async def type_line(pilot: Any, panel: SessionPanel, line: str) -> None:
    """Put ``line`` in ``panel``'s prompt box (focused) and press enter."""
    panel.prompt_box.input.focus()
    panel.prompt_box.input.value = line
    await pilot.press("enter")
