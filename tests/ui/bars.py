"""Approval and conflict bars in tests: an ``rm -rf build`` ask (``rm_ask``) and the plain text a bar or
a Static shows (``bar_text``, ``plain``)."""

from __future__ import annotations

import asyncio
import io
from typing import Any

from rich.console import Console
from textual.widgets import Button, Static

from paragents.events import PermissionRequested
from paragents.models import CallPreview, ToolCall
from paragents.ui.widgets.approval_bar import ApprovalBar
from paragents.ui.widgets.conflict_bar import ConflictBar


def rm_ask(rid: str = "r1", preview: CallPreview | None = None, **kw: Any) -> PermissionRequested:
    call = ToolCall("c1", "run_command", '{"command": "rm -rf build"}')
    return PermissionRequested(
        "s1", rid, call, "run_command rm -rf build", "no rule allows `rm -rf build`", ("Bash(rm *)",),
        asyncio.get_running_loop().create_future(), preview, **kw,
    )  # fmt: skip


def plain(widget: Static, width: int = 150) -> str:
    """The text a Static shows (its content rendered by rich, no markup parsing involved)."""
    console = Console(file=io.StringIO(), width=width, color_system=None)
    console.print(widget.content)
    return console.file.getvalue()  # type: ignore[attr-defined]


def bar_text(bar: ApprovalBar | ConflictBar) -> str:
    return "\n".join(plain(s) for s in bar.query(Static).results(Static) if not isinstance(s, Button))
