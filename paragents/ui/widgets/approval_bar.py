"""Inline approval bar: shows one pending permission ask under a session's transcript (not a modal).

Keys while the bar has focus: ``y`` allow once, ``s`` allow for this session, ``a`` always allow (shows
the exact rules it will store in an editable Input; Enter saves, Esc goes back), ``n`` deny, ``d`` deny
with a note (Input; Enter sends). The bar posts :class:`paragents.ui.messages.ApprovalAnswered`; the
panel resolves the ask's Future. Rule syntax is Claude Code's (``Bash(npm test *)``, ``Edit(src/**)``).
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Input, Static

from paragents.events import PermissionRequested
from paragents.ui.glyphs import glyphs
from paragents.ui.messages import ApprovalAnswered
from paragents.ui.text import clean, shorten

KEY_HELP = "y allow once · s allow this session · a always allow… · n deny · d deny with note…"
"""The key line (drawn with the glyph set's separator and ellipsis: :func:`key_help`)."""


def key_help() -> str:
    """:data:`KEY_HELP` in the glyph set in use."""
    g = glyphs()
    return KEY_HELP.replace("·", g.sep).replace("…", g.ellipsis)


def parse_rules(text: str) -> list[str]:
    """Split the rules Input (rules separated by ';' or newlines) into a list of non-empty rules."""
    return [part.strip() for part in text.replace("\n", ";").split(";") if part.strip()]


class ApprovalBar(Vertical, can_focus=True):
    """Shows ``request`` (a PermissionRequested event) and turns the user's key into an answer."""

    DEFAULT_CSS = """
    ApprovalBar { height: auto; padding: 0 1; border: tall $warning; background: $warning 10%; }
    ApprovalBar:focus { border: tall $warning-lighten-2; background: $warning 20%; }
    ApprovalBar > .ask { height: auto; }
    ApprovalBar > .keys { height: auto; color: $text-muted; }
    ApprovalBar > Input { display: none; }
    ApprovalBar.-rules > #rules, ApprovalBar.-note > #note { display: block; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer('allow_once')", "Allow once"),
        Binding("s", "answer('allow_session')", "Allow session"),
        Binding("a", "always", "Always allow…"),
        Binding("n", "answer('reject_once')", "Deny"),
        Binding("d", "note", "Deny with note…"),
    ]

    def __init__(self, request: PermissionRequested, *, extra_pending: int = 0) -> None:
        super().__init__(classes="approval")
        self.request = request
        """The ask being shown."""
        self.extra_pending = extra_pending
        """How many more asks of this session wait behind this one."""

    def compose(self) -> ComposeResult:
        req = self.request
        text = Text(overflow="fold")
        text.append(f"{glyphs().warn} Permission needed: ", style="bold")
        summary = shorten(req.summary, 400)
        if not summary.startswith(req.call.name):
            text.append(clean(req.call.name), style="bold")
            text.append("  ")
        text.append(summary)
        if req.reason:
            text.append("\n  why: ", style="dim")
            text.append(shorten(req.reason, 200), style="dim")
        if self.extra_pending:
            text.append(f"\n  (+{self.extra_pending} more waiting)", style="dim")
        yield Static(text, classes="ask")
        yield Static(key_help(), classes="keys", markup=False)
        yield Input(
            "; ".join(req.suggested_rules),
            placeholder="rules to store, separated by ';'  (Enter saves, Esc goes back)",
            id="rules",
        )
        yield Input(placeholder="note for the model (Enter sends, Esc goes back)", id="note")

    def action_answer(self, answer: str) -> None:
        """Answer without payload (allow_once, allow_session, reject_once)."""
        self.post_message(ApprovalAnswered(self.request.request_id, answer, None))  # type: ignore[arg-type]

    def action_always(self) -> None:
        """Show the editable rules Input for "always allow"."""
        self.set_class(True, "-rules")
        self.query_one("#rules", Input).focus()

    def action_note(self) -> None:
        """Show the note Input for "deny with note"."""
        self.set_class(True, "-note")
        self.query_one("#note", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.input.id == "rules":
            rules = parse_rules(event.value)
            if not rules:
                self.notify("Type at least one rule, or press Esc and choose another answer.")
                return
            self.post_message(ApprovalAnswered(self.request.request_id, "allow_always", rules))
        elif event.input.id == "note":
            note = event.value.strip()
            self.post_message(ApprovalAnswered(self.request.request_id, "reject_with_note", note))

    def close_inputs(self) -> bool:
        """Close an open rules/note Input and refocus the bar; return True when one was open."""
        if self.has_class("-rules") or self.has_class("-note"):
            self.set_class(False, "-rules")
            self.set_class(False, "-note")
            self.focus()
            return True
        return False

    def on_key(self, event: events.Key) -> None:
        """Esc inside an open Input goes back to the bar (it does not cancel the turn)."""
        if event.key == "escape" and self.close_inputs():
            event.stop()
            event.prevent_default()


if __name__ == "__main__":
    import asyncio

    from paragents.models import ToolCall

    class _Demo(App[None]):
        def compose(self) -> ComposeResult:
            fut: asyncio.Future = asyncio.get_event_loop().create_future()
            yield ApprovalBar(
                PermissionRequested(
                    "s1",
                    "r1",
                    ToolCall("c1", "write_file", '{"path": "src/app.py"}'),
                    "write_file path=src/app.py (120 lines)",
                    "Edit is not allowed by any rule (default: ask)",
                    ("Edit(src/app.py)",),
                    fut,
                ),
                extra_pending=1,
            )
            yield Static("", id="out")

        def on_approval_answered(self, msg: ApprovalAnswered) -> None:
            self.query_one("#out", Static).update(f"answered {msg.answer} {msg.payload!r}")

    _Demo().run()
