"""Both sides of a predicted lane conflict: each lane's diff of the conflicting files against its base
(or the base branch's change), side by side, as plain inert text. Esc closes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static


class SidesScreen(ModalScreen[None]):
    """``title`` over one scrolling column per ``(heading, diff)`` side."""

    DEFAULT_CSS = """
    SidesScreen { background: $background 60%; }
    SidesScreen > #sides-title { height: auto; padding: 0 1; background: $warning 30%; text-style: bold; }
    SidesScreen > Horizontal { height: 1fr; }
    SidesScreen VerticalScroll { width: 1fr; border: round $panel-lighten-2; padding: 0 1; }
    SidesScreen .side-heading { text-style: bold; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss", "Close")]

    def __init__(self, title: str, sides: Sequence[tuple[str, str]]) -> None:
        super().__init__()
        self.title_text = title
        self.sides = list(sides)

    def compose(self) -> ComposeResult:
        yield Static(Text(self.title_text), id="sides-title")
        with Horizontal():
            for heading, diff in self.sides:
                with VerticalScroll(classes="side"):
                    yield Static(Text(heading), classes="side-heading")
                    yield Static(Text(diff or "(no change)"), classes="side-diff")
        yield Footer()

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)
