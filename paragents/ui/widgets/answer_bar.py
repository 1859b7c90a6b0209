"""What the approval and conflict bars share: answers are only ever given deliberately.

A bar never takes focus by itself. It is not focusable (Tab and Textual's focus recovery skip it) and
its answer keys do nothing until the user *arms* it: :data:`FOCUS_KEY` (the app's binding) or a click
on the bar. Arming makes it focusable and focuses it; once focus leaves the bar (and its inputs) it
disarms again. Its buttons act on a click (a click is deliberate) and never take focus, so an Enter
typed for the prompt can never press one.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import events
from textual.actions import parse as parse_action
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.dom import NoScreen
from textual.widget import Widget
from textual.widgets import Button, Static

FOCUS_KEY = "ctrl+g"
"""The app's key that moves focus to the focused panel's bar (and back to its prompt)."""
FOCUS_KEY_LABEL = "ctrl+g"
"""How the bars and /help spell :data:`FOCUS_KEY`."""


def answer_buttons(choices: list[tuple[str, str]]) -> Horizontal:
    """Return a row of compact, never-focused buttons, one per ``(id, label)`` choice."""
    buttons = []
    for ident, label in choices:
        button = Button(Content(label), id=ident, compact=True)  # plain text: labels may be an agent's
        button.can_focus = False
        buttons.append(button)
    return Horizontal(*buttons, classes="answer-buttons")


def focus_now(widget: Widget) -> None:
    """Focus ``widget`` now, not after the messages already queued (``Widget.focus`` defers it):
    keys that arrive in the same burst as the key that moved focus must follow it."""
    try:
        widget.screen.set_focus(widget, scroll_visible=False)
    except NoScreen:
        widget.focus()


class AnswerBar(Vertical):
    """Base of the bars: armed state, gated answer actions, click to arm, key line.

    Subclasses set :attr:`ANSWER_ACTIONS` (the action names a key may only run while armed) and
    :attr:`KEY_HELP` (the keys shown while armed), and compose a ``Static`` with class ``keys``."""

    DEFAULT_CSS = """
    AnswerBar > .keys { height: auto; color: $text-muted; }
    AnswerBar > .answer-buttons { height: auto; }
    AnswerBar > .answer-buttons > Button { width: auto; min-width: 0; margin: 0 1 0 0; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("pagedown", "scroll_preview(1)", "Scroll", show=False),
        Binding("pageup", "scroll_preview(-1)", "Scroll", show=False),
    ]
    ANSWER_ACTIONS: ClassVar[frozenset[str]] = frozenset()
    KEY_HELP: ClassVar[str] = ""
    can_focus = False
    _handed_to: Widget | None = None
    """The prompt that focus went to after this bar answered (late keys are passed on to it)."""

    @property
    def armed(self) -> bool:
        """True once the user moved focus here (focus key or click), until focus leaves the bar."""
        return self.has_class("-armed")

    def keys_text(self) -> Text:
        """Return the key line: how to arm the bar, or (armed) its answer keys."""
        if self.armed:
            in_panel = any(hasattr(node, "prompt_box") for node in self.ancestors)  # not in the inbox
            back = f" · {FOCUS_KEY_LABEL} back to the prompt" if in_panel else ""
            return Text(f"{self.key_help()}{back}", style="bold")
        return Text(f"{FOCUS_KEY_LABEL} (or a click here) to answer with keys · or click a button")

    def key_help(self) -> str:
        """Return the answer keys shown while armed (default :attr:`KEY_HELP`)."""
        return self.KEY_HELP

    def on_mount(self) -> None:
        self.watch(self.screen, "focused", self._focus_moved, init=False)

    def arm(self) -> None:
        """Make the bar focusable, focus it and enable its answer keys (the user asked for it).
        Focus moves at once, so an answer key typed right after the focus key reaches the bar."""
        self.can_focus = True
        self.add_class("-armed")
        self._show_keys()
        focus_now(self)
        self.refresh_bindings()

    def answered(self) -> None:
        """Called right after the bar posted its answer: its keys go off and, in a panel, focus goes
        back to the panel's prompt at once, so what is typed right after the answer lands there (not
        in this bar, which is about to be removed)."""
        self.disarm()
        for node in self.ancestors:
            box = getattr(node, "prompt_box", None)
            if box is not None:
                focus_now(box.input)
                self._handed_to = box.input
                return

    async def _on_key(self, event: events.Key) -> None:
        # Keys the app routed here before this bar's answer moved focus (one terminal read holding
        # "n" and "hello") would be lost with the bar: they go on to the prompt, in order.
        if self._handed_to is not None:
            event.stop()
            event.prevent_default()
            self._handed_to.post_message(events.Key(event.key, event.character))
            return
        # An armed bar runs its answer keys here, in the order they arrive, not as bindings (Textual
        # runs those only when the key has bubbled up to the app, after later keys were routed).
        action = self._answer_keys().get(event.key)
        if action is not None and self.armed:
            name, params = parse_action(action)[1:]
            event.stop()
            event.prevent_default()
            if self.check_action(name, params):
                await self.run_action(action)

    def _answer_keys(self) -> dict[str, str]:
        """Key -> action of this bar's answer bindings."""
        keys: dict[str, str] = {}
        for binding in self.BINDINGS:
            if isinstance(binding, Binding) and parse_action(binding.action)[1] in self.ANSWER_ACTIONS:
                for key in binding.key.split(","):
                    keys[key.strip()] = binding.action
        return keys

    def _on_paste(self, event: events.Paste) -> None:
        if self._handed_to is not None:
            event.stop()
            event.prevent_default()
            self._handed_to.post_message(events.Paste(event.text))

    def disarm(self) -> None:
        """Answer keys off and the bar unfocusable again (focus left it)."""
        if not self.armed:
            return
        self.can_focus = False
        self.remove_class("-armed")
        self._show_keys()
        self.refresh_bindings()

    def _show_keys(self) -> None:
        for keys in self.query(".keys").results(Static):
            keys.update(self.keys_text())

    def _focus_moved(self, focused: Widget | None) -> None:
        if focused is None or (focused is not self and self not in focused.ancestors):
            self.disarm()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Answer actions run only while the bar is armed (a stray key does nothing)."""
        return self.armed if action in self.ANSWER_ACTIONS else True

    def action_scroll_preview(self, direction: int) -> None:
        """PageUp/PageDown in the bar: scroll its preview, else the slot holding it (a small panel)."""
        scrollables = [*self.query(".preview"), self.parent]
        for target in scrollables:
            if isinstance(target, Widget) and target.max_scroll_y > 0:
                at_end = target.scroll_y >= target.max_scroll_y if direction > 0 else target.scroll_y <= 0
                if not at_end:
                    (target.scroll_page_down if direction > 0 else target.scroll_page_up)(animate=False)
                    return

    def on_click(self, event: events.Click) -> None:
        """A click on the bar is deliberate: arm it (buttons answer by themselves)."""
        if not self.armed:
            self.arm()
