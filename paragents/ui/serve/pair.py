"""The ``/pair`` screen: a one-time link and its QR code (plain text), with how long it works."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static


class PairScreen(ModalScreen[None]):
    """Shows ``qr`` (Unicode blocks), the ``link`` and a ``note``; Esc or q closes it."""

    DEFAULT_CSS = """
    PairScreen { align: center middle; }
    PairScreen > VerticalScroll { width: auto; max-width: 95%; height: auto; max-height: 95%;
                                  border: thick $accent; background: $surface; padding: 0 1; }
    PairScreen .qr { width: auto; color: white; background: black; }
    PairScreen .link { width: auto; text-style: bold; }
    PairScreen .note { width: auto; color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "close", "Close")]

    def __init__(self, qr: str, link: str, note: str) -> None:
        super().__init__()
        self.qr, self.link, self.note = qr, link, note

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text("Scan with the phone (works once, for 5 minutes)"), classes="note")
            yield Static(Text(self.qr.rstrip("\n"), no_wrap=True), classes="qr")
            yield Static(Text(self.link, overflow="fold"), classes="link")
            yield Static(Text(self.note), classes="note")
        yield Footer()

    def action_close(self) -> None:
        self.dismiss(None)


class Demo(App[None]):
    """``python -m paragents.ui.serve.pair``: the screen with a sample link."""

    def on_mount(self) -> None:
        # Deferred for start-up time: the app imports this module at start and serve.pairing pulls
        # the serve stack (65 modules, ~0.5 s); only this demo needs it here.
        from paragents.serve.pairing import qr_text

        link = "http://127.0.0.1:8765/pair/sample-code-not-valid"
        self.push_screen(PairScreen(qr_text(link), link, "reach this machine with ssh -L or a VPN"))


if __name__ == "__main__":
    Demo().run()
