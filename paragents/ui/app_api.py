"""What the app's helpers (slash-command handlers, startup, the palette) may use of the app:
:class:`AppAPI`, the public surface of ``ParagentsApp`` (mypy checks that the app satisfies it).

It lets ``command_runner.py``, ``startup.py`` and ``palette.py`` be typed without importing
``app.py`` (which imports them), so the modules form no import cycle."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.containers import Container
    from textual.screen import Screen

    from paragents.sessions import SessionsAPI, SessionView
    from paragents.ui.core.commands import SlashCommand
    from paragents.ui.widgets.session_panel import SessionPanel


class AppAPI(Protocol):
    """The public API of the TUI app (see ``ParagentsApp`` for each member's behaviour)."""

    runtime: SessionsAPI
    panels: dict[str, SessionPanel]
    active_sid: str | None
    ready: bool
    tune_gc: bool

    @property
    def grid(self) -> Container: ...
    @property
    def active_panel(self) -> SessionPanel | None: ...
    @property
    def screen(self) -> Screen[Any]: ...

    # sessions and panels
    async def open_session(
        self, name: str | None = None, *, model: str | None = None, workdir: Path | None = None
    ) -> None: ...
    async def add_panel(self, view: SessionView, *, focus: bool = True) -> SessionPanel: ...
    async def mount_panels(self, panels: list[SessionPanel]) -> None: ...
    async def close_session(self, sid: str) -> None: ...
    async def show_empty_hint(self) -> None: ...
    def focus_panel(self, sid: str) -> None: ...
    def sync_panel(self, sid: str) -> None: ...
    def sync_panels(self) -> None: ...
    def update_header(self) -> None: ...

    # commands, screens and their results
    def start_command(self, sid: str | None, command: SlashCommand) -> None: ...
    def show_screen(self, screen: Screen[Any], callback: Callable[[Any], None] | None = None) -> None: ...
    def setup_closed(self, saved: bool | None) -> None: ...
    def session_picked(self, sid: str | None) -> None: ...
    def action_inbox(self) -> None: ...
    def action_overview(self) -> None: ...
    async def action_quit(self, force: bool = False) -> None: ...

    # messages to the user
    def show_error(self, exc: Exception) -> None: ...
    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: Any = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None: ...

    # scheduling (Textual's)
    def call_after_refresh(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool: ...
    def run_worker(
        self,
        work: Any,
        name: str | None = "",
        group: str = "default",
        description: str = "",
        exit_on_error: bool = True,
        start: bool = True,
        exclusive: bool = False,
        thread: bool = False,
    ) -> Any: ...
