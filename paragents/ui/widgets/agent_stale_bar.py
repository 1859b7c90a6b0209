"""The bar of a reopened session whose external ACP agent cannot continue the stored conversation (no
``session/load`` nor ``session/resume``): the transcript stays, read-only for the agent, and this bar
offers the one way on, starting a new agent session in the same panel (the same as ``/agent new``).
Like the approval bar it answers only deliberately (:mod:`paragents.ui.widgets.answer_bar`): a click
on its button, or ``n`` once the user moved focus here with ctrl+g or a click. Typing in the prompt
never answers it; a prompt sent meanwhile waits for the new agent session."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Button, Static

from paragents.ui.core.messages import AgentNewChoice, Answer
from paragents.ui.widgets.answer_bar import AnswerBar, answer_buttons

NEW = "agent-new"


class AgentStaleBar(AnswerBar):
    """Says why the agent cannot continue session ``sid`` (``reason``) and offers a new agent session."""

    DEFAULT_CSS = """
    AgentStaleBar { height: auto; padding: 0 1; border: tall $warning; background: $warning 10%; }
    AgentStaleBar.-armed { border: tall $warning-lighten-2; background: $warning 20%; }
    AgentStaleBar > .reason { height: auto; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("n", "start_new", "Start a new agent session")]
    ANSWER_ACTIONS = frozenset({"start_new"})
    KEY_HELP = "n start a new agent session"

    def __init__(self, sid: str, reason: str) -> None:
        super().__init__(classes="agent-stale-bar")
        self.sid = sid
        self.reason = reason
        self._done = False

    def compose(self) -> ComposeResult:
        yield Static(Text(f"Read-only: {self.reason}"), classes="reason")
        yield Static(self.keys_text(), classes="keys")
        yield answer_buttons([(NEW, "Start a new agent session")])

    def action_start_new(self) -> None:
        """Ask once for a new agent session (the app runs ``/agent new``); the core's event removes the
        bar (or, when it could not start, shows a new one)."""
        if self._done:
            return
        self._done = True
        self.answered()
        self.post_message(Answer(AgentNewChoice(self.sid)))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == NEW:
            self.action_start_new()
