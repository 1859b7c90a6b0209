"""The Lanes screen's "commit the lane's changes" dialog (``c``): the lane's uncommitted files, the git
commands paragents runs, and the commit message drafted from the lane's turns in an editable
TextArea. paragents commits on the user's behalf (the agent may not be able to in its sandbox); the
commit holds exactly the reviewed tree, so a verify that passed on it still holds. Dismisses with an
:class:`~paragents.ui.lanes.merge.Outcome` (None when cancelled)."""

from __future__ import annotations

import shlex
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static, TextArea

from paragents.ui.core.text import clean
from paragents.ui.lanes.merge import Outcome, command_lines

READABLE = ("SessionError", "LaneError", "StoreError")


class CommitScreen(ModalScreen[Outcome | None]):
    """Commit lane ``review.name``'s uncommitted files (``actions``: the runtime's LaneActions)."""

    DEFAULT_CSS = """
    CommitScreen { align: center middle; }
    CommitScreen > Vertical { width: 90%; height: 85%; border: thick $accent; background: $surface; }
    CommitScreen > Vertical { padding: 0 1; }
    CommitScreen #commit-plan { height: auto; max-height: 45%; }
    CommitScreen .title { text-style: bold; }
    CommitScreen TextArea { height: 1fr; min-height: 5; }
    CommitScreen #commit-status { height: auto; color: $warning; }
    CommitScreen Horizontal { height: auto; }
    CommitScreen Button { margin-right: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, actions: Any, review: Any) -> None:
        super().__init__()
        self.actions = actions
        self.review = review

    def compose(self) -> ComposeResult:
        review = self.review
        with Vertical():
            yield Static(
                Text(clean(f"Commit the changes of lane {review.name} on its branch")), classes="title"
            )
            with VerticalScroll(id="commit-plan"):
                yield Static(self._plan_text())
            yield Static(Text("Commit message (drafting…)"), id="commit-label")
            yield TextArea("", id="commit-message", soft_wrap=True)
            yield Static("", id="commit-status")
            with Horizontal():
                yield Button("Commit", id="commit-go", variant="primary")
                yield Button("Cancel", id="commit-cancel")

    def _plan_text(self) -> Text:
        review = self.review
        where = shlex.quote(str(review.extra.get("path", f"<lane {review.name}>")))
        text = command_lines(
            [f"git -C {where} add -A", f"git -C {where} commit --no-verify -m <the message below>"]
        )
        text.append(
            f"\n{len(review.files)} file(s) differ from the base; the commit takes the lane's working "
            "tree exactly as reviewed (untracked files too, ignored ones not).\n"
        )
        text.append("A verify result on this tree still holds after the commit.\n", style="dim")
        return text

    def on_mount(self) -> None:
        self.draft()
        self.query_one("#commit-message", TextArea).focus()

    @work(exclusive=True, group="draft")
    async def draft(self) -> None:
        message, source = await self.actions.draft(self.review.name, "commit")
        area = self.query_one("#commit-message", TextArea)
        if not area.text.strip():
            area.load_text(message)
        self.query_one("#commit-label", Static).update(Text(f"Commit message ({clean(source)}; edit it):"))

    def action_cancel(self) -> None:
        self.dismiss(None)

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "commit-cancel":
            self.dismiss(None)
        elif event.button.id == "commit-go":
            self.go()

    @work(exclusive=True, group="commit")
    async def go(self) -> None:
        message = self.query_one("#commit-message", TextArea).text
        self.query_one("#commit-go", Button).disabled = True
        try:
            after = await self.actions.commit(self.review.name, message, self.review.state)
        except Exception as exc:
            name = type(exc).__name__
            if name == "LaneMoved":
                self.dismiss(Outcome("moved", str(exc)))
                return
            if name not in READABLE:
                raise
            self.query_one("#commit-status", Static).update(Text(clean(str(exc))))
            self.query_one("#commit-go", Button).disabled = False
            return
        subject = message.strip().splitlines()[0] if message.strip() else ""
        self.dismiss(
            Outcome("done", f"Committed lane {self.review.name}'s changes as {after.head[:12]}: {subject}")
        )
