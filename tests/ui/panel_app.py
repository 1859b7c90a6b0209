"""One SessionPanel in a bare App (``PanelApp``) over a ``view`` of a session: widget tests without
the runtime."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar, cast

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType

from paragents.sessions import SessionView
from paragents.ui import answers
from paragents.ui.app_api import AppAPI
from paragents.ui.core.messages import Answer
from paragents.ui.widgets.answer_bar import FOCUS_KEY
from paragents.ui.widgets.session_panel import SessionPanel
from tests.ui.fake_runtime import _Approvals as FakeApprovals


def view(sid: str = "s1", messages: list[dict[str, Any]] | None = None) -> SessionView:
    return SessionView(sid, "demo", "m", "default", Path("."), messages=list(messages or []))


class PanelApp(App[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding(FOCUS_KEY, "focus_ask", priority=True)]

    def __init__(self, messages: list[dict[str, Any]] | None = None) -> None:
        super().__init__()
        self.messages = messages
        self.runtime = SimpleNamespace(approvals=FakeApprovals())  # the rule check of "always allow"

    def compose(self) -> ComposeResult:
        panel = SessionPanel(view(messages=self.messages), 1)
        panel.add_class("-active")
        self.panels = {panel.session_id: panel}
        yield panel

    def on_mount(self) -> None:
        self.query_one(SessionPanel).prompt_box.input.focus()

    def action_focus_ask(self) -> None:
        self.query_one(SessionPanel).toggle_bar_focus()

    async def on_answer(self, message: Answer) -> None:
        """A bar's answer: what the real app does (paragents.ui.answers)."""
        await answers.handle(cast(AppAPI, self), message.choice)
