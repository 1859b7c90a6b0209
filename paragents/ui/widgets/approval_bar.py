"""Inline approval bar: shows one pending permission ask under a session's transcript (not a modal).

It shows what will happen before it happens (:class:`~paragents.models.CallPreview`: the diff of an
edit, the head and size of a new file, the full command and its directory) and which rule made it
ask, in a scrollable preview of bounded height that folds away. Answers are only given deliberately
(:mod:`paragents.ui.widgets.answer_bar`): a click on a button, or a key once the user moved focus
here (ctrl+g or a click). Keys then: ``y`` allow once, ``s`` allow for this session, ``a`` always
allow (shows the exact rules it will store in an editable Input; Enter saves, Esc goes back), ``n``
deny, ``d`` deny with a note (Input; Enter sends). The bar posts
:class:`paragents.ui.core.messages.Answer` (an :class:`~paragents.ui.core.messages.ApprovalChoice`); the app
resolves the ask's Future (``paragents.ui.answers``). Rule syntax is
Claude Code's (``Bash(npm test *)``, ``Edit(src/**)``).
"""

from __future__ import annotations

import asyncio
from typing import ClassVar

from rich.console import RenderableType
from rich.syntax import Syntax
from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Button, Collapsible, Input, Static

from paragents.events import ApprovalAnswer, PermissionAnswer, PermissionRequested
from paragents.models import CallPreview, ToolCall
from paragents.permissions.destructive import call_destructive
from paragents.terminal_text import show_controls
from paragents.ui.core.glyphs import glyphs
from paragents.ui.core.messages import Answer, ApprovalChoice
from paragents.ui.core.text import clean, shorten
from paragents.ui.widgets.answer_bar import AnswerBar, answer_buttons, focus_now
from paragents.ui.widgets.ordered_input import OrderedInput

KEY_HELP = "y allow once · s allow this session · a always allow… · n deny · d deny with note…"
KEY_HELP_NO_RULES = "y allow once · s allow this session · n deny · d deny with note…"
"""Shown when the policy suggests no rule (e.g. ``rm -rf ~``): "always allow" is not offered."""
BUTTONS: list[tuple[str, str]] = [
    ("allow_once", "Allow once"),
    ("allow_session", "Allow for session"),
    ("allow_always", "Always allow…"),
    ("reject_once", "Deny"),
    ("reject_with_note", "Deny with note…"),
]
"""Button id (the answer) and label, in the order shown."""
AGENT_KINDS = {"allow_once": "allow_once", "allow_always": "allow_always", "reject_once": "reject_once"}
"""paragents' answer -> the kind of an external agent's option whose name labels it."""
OPTION_NAME_MAX = 32


def offered_buttons(request: PermissionRequested) -> list[tuple[str, str]]:
    """The answers offered for ``request``: "always allow" only with suggested rules; for an external
    agent's ask the agent's own option names label the answers they carry, and "deny with note" is
    not offered (ACP has no way to hand the note to the agent)."""
    offered = BUTTONS if request.suggested_rules else [b for b in BUTTONS if b[0] != "allow_always"]
    if not request.agent_options:
        return offered
    names = {kind: shorten(clean(name), OPTION_NAME_MAX) for kind, name in request.agent_options if name}
    out = []
    for answer, label in offered:
        if answer == "reject_with_note":
            continue
        name = names.get(AGENT_KINDS.get(answer, ""))
        if name:
            label = name + ("…" if answer == "allow_always" and not name.endswith("…") else "")
        out.append((answer, label))
    return out


def parse_rules(text: str) -> list[str]:
    """Split the rules Input (rules separated by ';' or newlines) into a list of non-empty rules."""
    return [part.strip() for part in text.replace("\n", ";").split(";") if part.strip()]


def rule_text(request: PermissionRequested) -> Text:
    """Return the line naming the rule that made the call ask, or saying that none matched."""
    text = Text(overflow="fold")
    text.append("  rule: ", style="dim")
    if request.rule:
        text.append(clean(request.rule), style="bold")
        if request.rule_scope:
            text.append(f" ({clean(request.rule_scope)})", style="dim")
    else:
        text.append("none matched", style="bold")
        if request.rule_scope:
            text.append(f" ({clean(request.rule_scope)} decided)", style="dim")
    return text


def preview_title(preview: CallPreview) -> Content:
    """Return the preview's fold title as plain Content (file names are never markup)."""
    what = {"diff": "diff", "content": "content", "command": "command"}.get(preview.kind, "what it does")
    detail = f": {shorten(preview.detail, 120)}" if preview.detail else ""
    return Content(f"{what}{detail}")


def preview_body(preview: CallPreview) -> RenderableType:
    """Return the preview as inert renderables: a diff as rich Syntax, anything else as Text."""
    if preview.kind == "diff" and preview.text:
        body: RenderableType = Syntax(clean(preview.text), "diff", word_wrap=True, theme="ansi_dark")
        if not preview.omitted and not preview.problem:
            return body
        from rich.console import Group

        extra = Text(style="dim")
        if preview.omitted:
            extra.append(f"… {preview.omitted} more lines")
        if preview.problem:
            extra.append(f"\n{glyphs().warn} {clean(preview.problem)}", style="bold red")
        return Group(body, extra)
    text = Text(overflow="fold")
    if preview.kind == "command":
        text.append("$ ", style="dim")
        text.append(clean(show_controls(preview.text)), style="bold")  # ESC as "␛": what runs
        text.append("\n  in ", style="dim")
        text.append(clean(preview.cwd) or "(the session's directory is not usable)")
    elif preview.text:
        text.append(clean(preview.text))
    elif preview.detail:
        text.append(clean(preview.detail))
    if preview.omitted:
        text.append(f"\n… {preview.omitted} more lines", style="dim")
    if preview.problem:
        text.append(f"\n{glyphs().warn} will fail: {clean(preview.problem)}", style="bold red")
    return text


_PLAIN: dict[str, ApprovalAnswer] = {
    "allow_once": "allow_once",
    "allow_session": "allow_session",
    "reject_once": "reject_once",
}
"""The buttons that answer at once (no note, no rules)."""
RULES_HINT = "Enter saves the rule(s) and allows the call · Esc goes back to the choices"
"""Shown above the rules Input while it is open."""


class ApprovalBar(AnswerBar):
    """Shows ``request`` (a PermissionRequested event) and turns a click or a key into an answer."""

    DEFAULT_CSS = """
    ApprovalBar { height: auto; padding: 0 1; border: tall $warning; background: $warning 10%; }
    ApprovalBar.-armed { border: tall $warning-lighten-2; background: $warning 20%; }
    ApprovalBar > .ask { height: auto; }
    ApprovalBar > Collapsible { height: auto; padding: 0; margin: 0; border: none; background: transparent; }
    ApprovalBar > Collapsible Contents { padding: 0 0 0 2; }
    ApprovalBar .preview { height: auto; max-height: 10; }
    ApprovalBar > Input, ApprovalBar > .rules-part { display: none; }
    ApprovalBar.-rules > #rules, ApprovalBar.-note > #note { display: block; }
    ApprovalBar.-rules > .rules-part { display: block; }
    ApprovalBar > #rules-hint { height: auto; color: $text; text-style: bold; }
    ApprovalBar > #rules-error { height: auto; color: $error; text-style: bold; }
    ApprovalBar.-rules > #rules-error.-clear { display: none; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer('allow_once')", "Allow once"),
        Binding("s", "answer('allow_session')", "Allow session"),
        Binding("a", "always", "Always allow…"),
        Binding("n", "answer('reject_once')", "Deny"),
        Binding("d", "note", "Deny with note…"),
    ]
    ANSWER_ACTIONS = frozenset({"answer", "always", "note"})
    KEY_HELP = KEY_HELP

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
        summary = shorten(show_controls(req.summary), 400)  # ESC as "␛", never dropped
        if not summary.startswith(req.call.name):
            text.append(clean(req.call.name), style="bold")
            text.append("  ")
        text.append(summary)
        if req.reason:
            text.append("\n  why: ", style="dim")
            text.append(
                shorten(show_controls(req.reason), 800), style="dim"
            )  # whole: it may say what "always" keeps
        danger = call_destructive(req.call.name, req.call.arguments)
        if danger:  # the one classifier (permissions/destructive.py), as the phone page's second tap
            text.append("\n  destructive: ", style="bold red")
            text.append(shorten(show_controls(danger), 200), style="red")
        if req.sandboxed is not None:
            text.append(
                "\n  runs in the sandbox (workdir writable, no network)"
                if req.sandboxed
                else "\n  runs unconfined",
                style="dim",
            )
        text.append("\n")
        text.append_text(rule_text(req))
        if self.extra_pending:
            text.append(f"\n  (+{self.extra_pending} more waiting)", style="dim")
        yield Static(text, classes="ask")
        yield Static(self.keys_text(), classes="keys")
        yield answer_buttons(offered_buttons(req))
        if req.preview is not None:  # under the buttons: a small panel scrolls it, never them
            yield Collapsible(
                VerticalScroll(Static(preview_body(req.preview)), classes="preview"),
                title=preview_title(req.preview),  # type: ignore[arg-type]
                collapsed=False,
            )
        yield Static(RULES_HINT.replace("·", glyphs().sep), id="rules-hint", classes="rules-part")
        yield Static("", id="rules-error", classes="rules-part -clear")
        yield OrderedInput(
            "; ".join(req.suggested_rules),
            placeholder="rules to store, separated by ';'  (Enter saves, Esc goes back)",
            id="rules",
        )
        yield OrderedInput(placeholder="note for the model (Enter sends, Esc goes back)", id="note")

    def key_help(self) -> str:
        """The answer keys (in the glyph set in use); without suggested rules "always allow" is not
        offered."""
        g = glyphs()
        req = self.request
        if req.agent_options:
            letters = {"allow_once": "y", "allow_session": "s", "allow_always": "a", "reject_once": "n"}
            keys = " · ".join(f"{letters[a]} {label}" for a, label in offered_buttons(req))
        else:
            keys = KEY_HELP if req.suggested_rules else KEY_HELP_NO_RULES
        return keys.replace("·", g.sep).replace("…", g.ellipsis)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Offer "always allow" only when the policy suggested rules for this call; answer keys
        only while the bar is armed (see AnswerBar)."""
        if action == "always" and not self.request.suggested_rules:
            return False
        if action == "note" and self.request.agent_options:
            return False  # the note could not reach an external agent
        return super().check_action(action, parameters)

    def action_answer(self, answer: ApprovalAnswer) -> None:
        """Answer without a note or rules (allow_once, allow_session, reject_once)."""
        self.post_message(Answer(ApprovalChoice(self.request, PermissionAnswer(answer))))
        self.answered()

    def action_always(self) -> None:
        """Show the editable rules Input for "always allow" with its hint, focus it and scroll it into
        view (in a small panel it was below the fold: what the user typed as a prompt went there)."""
        self.set_class(False, "-note")
        self.set_class(True, "-rules")
        self.show_rules_error("")
        rules = self.query_one("#rules", Input)
        focus_now(rules)
        self.call_after_refresh(self._show_editor)

    def _show_editor(self) -> None:
        if self.has_class("-rules") and self.is_attached:
            self.query_one("#rules", Input).scroll_visible(animate=False)

    def show_rules_error(self, error: str) -> None:
        """Show ``error`` (plain text) above the rules Input; "" hides the line."""
        line = self.query_one("#rules-error", Static)
        line.update(Text(f"{glyphs().warn} {clean(error)}" if error else ""))
        line.set_class(not error, "-clear")

    def rules_refused(self, error: str) -> None:
        """The rules typed for "always allow" cannot be saved (``error`` says why): the ask stays open
        and the editor opens again, focused, with what was typed and the error; the user can fix the
        rule, or press Esc and answer otherwise. Nothing was allowed."""
        self._handed_to = None
        self.arm()
        self.action_always()
        self.show_rules_error(error)

    def action_note(self) -> None:
        """Show the note Input for "deny with note"."""
        self.set_class(False, "-rules")
        self.set_class(True, "-note")
        focus_now(self.query_one("#note", Input))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """A click on a button answers (the two with an Input arm the bar and open it)."""
        event.stop()
        answer = event.button.id or ""
        if answer == "allow_always" and not self.request.suggested_rules:
            return
        if answer == "reject_with_note" and self.request.agent_options:
            return
        if answer in ("allow_always", "reject_with_note"):
            self.arm()
            (self.action_always if answer == "allow_always" else self.action_note)()
        elif answer in _PLAIN:
            self.action_answer(_PLAIN[answer])

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.input.id == "rules":
            rules = parse_rules(event.value)
            if not rules:
                self.show_rules_error("Type at least one rule, or press Esc and choose another answer.")
                return
            answer = PermissionAnswer("allow_always", rules=tuple(rules))
            self.post_message(Answer(ApprovalChoice(self.request, answer)))
            self.answered()
        elif event.input.id == "note":
            note = event.value.strip()
            self.post_message(
                Answer(ApprovalChoice(self.request, PermissionAnswer("reject_with_note", note=note)))
            )
            self.answered()

    def close_inputs(self) -> bool:
        """Close an open rules/note Input and refocus the bar; return True when one was open."""
        if self.has_class("-rules") or self.has_class("-note"):
            self.set_class(False, "-rules")
            self.set_class(False, "-note")
            focus_now(self)  # now: an answer key typed right after Esc reaches the bar
            return True
        return False

    def on_key(self, event: events.Key) -> None:
        """Esc inside an open Input goes back to the bar (it does not cancel the turn)."""
        if event.key == "escape" and self.close_inputs():
            event.stop()
            event.prevent_default()


class Demo(App[None]):
    """The approval bar's states: a write with its preview and a second ask waiting, and a command."""

    def compose(self) -> ComposeResult:
        loop = asyncio.get_running_loop()
        yield ApprovalBar(
            PermissionRequested(
                "s1",
                "r1",
                ToolCall("c1", "write_file", '{"path": "src/app.py"}'),
                "write_file path=src/app.py (3 lines)",
                "Edit is not allowed by any rule (default: ask)",
                ("Edit(src/app.py)",),
                loop.create_future(),
                preview=CallPreview("content", "def main():\n    return 1\n", "new file, 3 lines"),
            ),
            extra_pending=1,
        )
        yield ApprovalBar(
            PermissionRequested(
                "s2",
                "r2",
                ToolCall("c2", "run_command", '{"command": "npm test"}'),
                "run_command npm test",
                "no rule allows it",
                ("Bash(npm test)",),
                loop.create_future(),
            )
        )
        yield Static("", id="out")

    def on_answer(self, msg: Answer) -> None:
        choice = msg.choice
        assert isinstance(choice, ApprovalChoice)
        answer = choice.answer
        self.query_one("#out", Static).update(f"answered {answer.kind} {answer.note or list(answer.rules)!r}")


if __name__ == "__main__":
    Demo().run()
