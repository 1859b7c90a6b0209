"""Helpers of the ACP tests: type a line in a panel, the fake agent's request log (``calls``), the text
and the notices a session's events carried."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from paragents import events as ev
from paragents.ui.widgets.session_panel import SessionPanel


async def type_line(pilot: Any, panel: SessionPanel, line: str) -> None:
    panel.prompt_box.input.focus()
    panel.prompt_box.input.value = line
    await pilot.press("enter")


def calls(log: Path) -> list[str]:
    """The requests the fake agent got (FAKE_ACP_LOG), one per line."""
    return log.read_text().splitlines() if log.exists() else []


def texts(sink: ev.EventSink, sid: str) -> str:
    return "".join(e.text for e in sink.of(ev.TextDelta, sid))  # type: ignore[attr-defined]


def notices(sink: ev.EventSink, sid: str) -> list[str]:
    return [e.text for e in sink.of(ev.Notice, sid)]  # type: ignore[attr-defined]
