"""The lane question (config ``lanes: "ask"``): a new session would share the checkout with another
session that writes there, so the panel the session was asked from shows this bar: open it in its own
lane (a git worktree), share the checkout, or cancel. Like the approval bar it answers only
deliberately (:mod:`paragents.ui.widgets.answer_bar`): a click on a button, or ``l`` / ``s`` / ``c``
once the user moved focus here with ctrl+g or a click. Typing in the prompt never answers it. It posts
:class:`~paragents.ui.core.messages.Answer` (a :class:`~paragents.ui.core.messages.LaneChoice`); the app opens
(or not) the session."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Button, Static

from paragents.ui.core.messages import Answer, LaneChoice
from paragents.ui.widgets.answer_bar import AnswerBar, answer_buttons

CHOICES = (("lane", "In a lane"), ("share", "Share the checkout"), ("cancel", "Cancel"))


class LaneAskBar(AnswerBar):
    """Asks (in the panel of ``session_id``) whether the new session ``name`` opens in a lane; answers
    "lane", "share" or "cancel" once (the app then removes the bar). ``options``: the rest of
    what the new session was asked with (model, workdir, base)."""

    DEFAULT_CSS = """
    LaneAskBar { height: auto; padding: 0 1; border: tall $accent; background: $accent 10%; }
    LaneAskBar.-armed { border: tall $accent-lighten-2; background: $accent 20%; }
    LaneAskBar > .question { height: auto; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("l", "answer('lane')", "In a lane"),
        Binding("s", "answer('share')", "Share the checkout"),
        Binding("c", "answer('cancel')", "Cancel"),
    ]
    ANSWER_ACTIONS = frozenset({"answer"})
    KEY_HELP = "l in a lane · s share the checkout · c cancel"

    def __init__(
        self, session_id: str, name: str | None, writers: list[str], options: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__(classes="lane-ask-bar")
        self.session_id = session_id
        self.session_name = name
        self.writers = writers
        self.options = dict(options or {})
        self._done = False

    def compose(self) -> ComposeResult:
        who = ", ".join(self.writers) or "another session"
        new = f"the new session {self.session_name}" if self.session_name else "the new session"
        yield Static(
            Text(f"{who} already writes in this checkout. Open {new} in its own lane (a git worktree)?"),
            classes="question",
        )
        yield Static(self.keys_text(), classes="keys")
        yield answer_buttons(list(CHOICES))

    def action_answer(self, choice: str) -> None:
        """Answer once; the app removes the bar and opens (or not) the session."""
        if self._done or choice not in dict(CHOICES):
            return
        self._done = True
        lane_choice = LaneChoice(self.session_id, choice, self.session_name, self.options)  # type: ignore[arg-type]
        self.post_message(Answer(lane_choice))
        self.answered()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_answer(event.button.id or "")
