"""The Lanes review screen (``/lanes``): one row per lane; the selected lane's commits, per-file
counts and its whole diff against its base (untracked files included), syntax-highlighted. Read-only:
merges go through ``paragents lanes merge`` (docs/lanes.md). Esc or q closes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from paragents.ui.text import clean


class LanesScreen(ModalScreen[None]):
    """Review the lanes: pick one on the left, read its commits and diff on the right."""

    DEFAULT_CSS = """
    LanesScreen { align: center middle; }
    LanesScreen > Vertical { width: 95%; height: 90%; border: thick $accent; background: $surface; }
    LanesScreen .title { height: auto; padding: 0 1; text-style: bold; }
    LanesScreen OptionList { width: 32; height: 1fr; }
    LanesScreen VerticalScroll { width: 1fr; height: 1fr; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "dismiss", "Close")]

    def __init__(self, reviews: Sequence[Any]) -> None:
        super().__init__()
        self.reviews = list(reviews)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                Text("Lanes — merge with `paragents lanes merge NAME --strategy squash|rebase|merge`"),
                classes="title",
            )
            with Horizontal():
                yield OptionList(
                    *(Option(Text(clean(r.name)), id=f"lane-{i}") for i, r in enumerate(self.reviews))
                )
                with VerticalScroll():
                    yield Static(self._body(0), id="lane-body")
            yield Footer()

    def on_mount(self) -> None:
        if self.reviews:
            self.query_one(OptionList).highlighted = 0
        self.query_one(OptionList).focus()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self.query_one("#lane-body", Static).update(self._body(event.option_index))

    def _body(self, index: int) -> Any:
        if not self.reviews:
            return Text("No lanes in this repository: /new NAME --lane opens a session in one.")
        review = self.reviews[index]
        head = Text(clean(review.summary) + "\n", style="bold")
        if review.problem:
            return Group(head, Text(clean(review.problem), style="yellow"))
        lines = [Text(f"{len(review.commits)} commit(s) not on the target yet:", style="bold")]
        lines += [Text("  " + clean(c)) for c in review.commits] or [Text("  none")]
        lines.append(Text(f"\n{len(review.files)} file(s) changed against the base:", style="bold"))
        for path, added, deleted in review.files:
            plus = "-" if added is None else added
            minus = "-" if deleted is None else deleted
            lines.append(Text(f"  {clean(path)}  +{plus} -{minus}"))
        patch = Syntax(clean(review.patch) or "(no changes)", "diff", theme="ansi_dark", word_wrap=True)
        return Group(head, *lines, Text(""), patch)
