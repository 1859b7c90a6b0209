"""Helpers of the ACP tests: the fake agent's request log (``calls``), the text and the notices a
session's events carried (typing a line in a panel: tests/typing_keys.py)."""

from __future__ import annotations

from pathlib import Path

from paragents import events as ev


def calls(log: Path) -> list[str]:
    """The requests the fake agent got (FAKE_ACP_LOG), one per line."""
    return log.read_text().splitlines() if log.exists() else []


def texts(sink: ev.EventSink, sid: str) -> str:
    return "".join(e.text for e in sink.of(ev.TextDelta, sid))  # type: ignore[attr-defined]


def notices(sink: ev.EventSink, sid: str) -> list[str]:
    return [e.text for e in sink.of(ev.Notice, sid)]  # type: ignore[attr-defined]
