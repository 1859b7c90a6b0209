"""The dialogs of the Lanes screen: :class:`MergeScreen` (squash, rebase, merge commit or push and
PR: the exact git commands, the merge-tree pre-check, the verify result with an explicit override,
the commit message drafted by the lane's model in an editable TextArea, "resolve in this lane" on a
predicted conflict) and :class:`ConfirmScreen` (discard: the commands, then yes/no). Each dismisses
with an :class:`Outcome` (or None when cancelled)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Static, TextArea

from paragents.ui.core.text import clean

TITLES = {
    "squash": "Squash-merge",
    "rebase": "Rebase-merge",
    "merge": "Merge commit",
    "pr": "Push and open a PR",
}


@dataclass(frozen=True)
class Outcome:
    """What a dialog did: ``kind`` is done, moved (the lane moved: review again), queued (a prompt
    went to the lane's session) or failed; ``text`` says it in a sentence."""

    kind: str
    text: str


def command_lines(commands: list[str]) -> Text:
    text = Text("git will run, in order:\n", style="bold")
    for command in commands:
        text.append("  $ " + clean(command) + "\n")
    return text


class MergeScreen(ModalScreen[Outcome | None]):
    """Confirm one way of bringing a lane back. ``actions`` is the runtime's LaneActions (or the
    demo's), ``plan`` a :class:`~paragents.lanes.bring_back.MergePlan`, ``review`` the lane's review
    (its ``state`` binds the merge)."""

    DEFAULT_CSS = """
    MergeScreen { align: center middle; }
    MergeScreen > Vertical { width: 90%; height: 90%; border: thick $accent; background: $surface; }
    MergeScreen > Vertical { padding: 0 1; }
    MergeScreen #plan { height: auto; max-height: 50%; }
    MergeScreen .title { text-style: bold; }
    MergeScreen TextArea { height: 1fr; min-height: 5; }
    MergeScreen #status { height: auto; color: $warning; }
    MergeScreen Horizontal { height: auto; }
    MergeScreen Button { margin-right: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, actions: Any, review: Any, plan: Any, *, gh: bool = True) -> None:
        super().__init__()
        self.actions = actions
        self.review = review
        self.plan = plan
        self.gh = gh
        self.drafted_from = ""

    @property
    def needs_override(self) -> bool:
        return self.plan.strategy != "pr" and not self.plan.verified

    @property
    def has_message(self) -> bool:
        return self.plan.strategy in ("squash", "merge", "pr")

    def compose(self) -> ComposeResult:
        plan = self.plan
        title = f"{TITLES[plan.strategy]}: lane {plan.lane} into {plan.target}"
        with Vertical():
            yield Static(Text(clean(title)), classes="title")
            with VerticalScroll(id="plan"):
                yield Static(self._plan_text(), id="plan-text")
            if self.has_message:
                yield Static(Text("Commit message (drafting…)"), id="message-label")
                yield TextArea("", id="message", soft_wrap=True)
            if self.needs_override:
                yield Checkbox("Merge although verify has not passed on this tree", id="override")
            yield Static("", id="status")
            with Horizontal():
                label = TITLES[plan.strategy] if plan.strategy != "pr" or self.gh else "Show the commands"
                yield Button(label, id="go", variant="primary", disabled=bool(plan.problem))
                if plan.conflicts:
                    yield Button("Resolve in this lane", id="resolve", variant="warning")
                yield Button("Cancel", id="cancel")

    def _plan_text(self) -> Text:
        plan = self.plan
        text = command_lines(plan.commands)
        if plan.strategy != "pr":
            text.append("\n" + clean(plan.verify_line()) + "\n", style="green" if plan.verified else "yellow")
            if plan.subjects:
                text.append(f"{len(plan.subjects)} commit(s): ", style="bold")
                text.append(clean("; ".join(plan.subjects[:6])) + "\n")
        if plan.conflicts:
            text.append(
                "merge-tree predicts a conflict in: " + clean(", ".join(plan.conflicts)) + "\n",
                style="bold red",
            )
            text.append("Resolve in this lane queues a prompt to the lane's session naming both sides.\n")
        elif plan.strategy != "pr":
            text.append("merge-tree: merges cleanly\n", style="green")
        if plan.strategy == "pr" and not self.gh:
            text.append("\ngh is not installed: nothing will run; the commands are shown to copy.\n")
        if plan.problem:
            text.append("\n" + clean(plan.problem) + "\n", style="bold yellow")
        return text

    def on_mount(self) -> None:
        if self.has_message:
            self.draft()
        self.query_one("#go", Button).focus()

    @work(exclusive=True, group="draft")
    async def draft(self) -> None:
        strategy = "squash" if self.plan.strategy == "pr" else self.plan.strategy
        message, source = await self.actions.draft(self.plan.lane, strategy)
        self.drafted_from = source
        area = self.query_one("#message", TextArea)
        if not area.text.strip():
            area.load_text(message)
        self.query_one("#message-label", Static).update(Text(f"Commit message ({clean(source)}; edit it):"))

    def message(self) -> str:
        return self.query_one("#message", TextArea).text if self.has_message else ""

    def action_cancel(self) -> None:
        self.dismiss(None)

    def say(self, text: str) -> None:
        self.query_one("#status", Static).update(Text(clean(text)))

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "cancel":
            self.dismiss(None)
        elif event.button.id == "resolve":
            self.resolve()
        elif event.button.id == "go":
            if self.needs_override and not self.query_one("#override", Checkbox).value:
                self.say(f"Merge refused: {self.plan.verify_line()}. Run verify (v), or tick the override.")
                return
            self.go()

    @work(exclusive=True, group="merge")
    async def resolve(self) -> None:
        try:
            await self.actions.resolve(self.plan.lane, tuple(self.plan.conflicts))
        except Exception as exc:
            if type(exc).__name__ not in ("SessionError", "LaneError", "LaneMoved", "StoreError"):
                raise
            self.say(str(exc))
            return
        files = ", ".join(self.plan.conflicts)
        self.dismiss(
            Outcome("queued", f"Asked lane {self.plan.lane}'s agent to resolve the conflict in {files}")
        )

    @work(exclusive=True, group="merge")
    async def go(self) -> None:
        self.query_one("#go", Button).disabled = True
        self.say("working…")
        override = self.needs_override
        try:
            result = await self.actions.merge(
                self.plan.lane, self.plan.strategy, self.review.state, self.message(), override=override
            )
        except Exception as exc:
            name = type(exc).__name__
            if name == "LaneMoved":
                self.dismiss(Outcome("moved", str(exc)))
                return
            if name not in ("SessionError", "LaneError", "StoreError", "FanoutError"):
                raise
            self.say(str(exc))
            self.query_one("#go", Button).disabled = False
            return
        lines = [result.summary, *result.commands]
        self.dismiss(Outcome("done", "\n".join(lines)))


class ConfirmScreen(ModalScreen[bool]):
    """Yes/no for an action whose git commands are listed (discard)."""

    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical { width: 90%; height: auto; border: thick $error; background: $surface; }
    ConfirmScreen > Vertical { padding: 0 1; }
    ConfirmScreen Horizontal { height: auto; }
    ConfirmScreen Button { margin-right: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, commands: list[str], note: str, button: str) -> None:
        super().__init__()
        self.title_text = title
        self.commands = commands
        self.note = note
        self.button = button

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(clean(self.title_text), style="bold"))
            yield Static(command_lines(self.commands))
            yield Static(Text(clean(self.note)))
            with Horizontal():
                yield Button(self.button, id="yes", variant="error")
                yield Button("Cancel", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def action_cancel(self) -> None:
        self.dismiss(False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")
