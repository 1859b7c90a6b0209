"""The command palette's slash-command entries (ctrl+p): one per command of ``ui/core/commands.py``.

Commands that need an argument are not run from the palette: they pre-fill the focused prompt box."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING

from textual.app import SystemCommand

from paragents.ui.core.commands import COMMANDS, SlashCommand

if TYPE_CHECKING:
    from paragents.ui.app_api import AppAPI

COMMANDS_WITH_ARGUMENT = {"rename", "model", "mode"}
"""Commands the palette cannot run directly: it pre-fills the prompt box instead."""


def slash_commands(app: AppAPI) -> Iterable[SystemCommand]:
    """One palette entry per slash command, with its help and usage."""
    for spec in COMMANDS:
        help_text = f"{spec.help}  ({spec.usage})"
        yield SystemCommand(f"/{spec.name}", help_text, partial(run_from_palette, app, spec.name))


def run_from_palette(app: AppAPI, name: str) -> None:
    """Run ``/name`` for the focused session, or pre-fill its prompt box when it takes an argument."""
    panel = app.active_panel
    if name in COMMANDS_WITH_ARGUMENT:
        if panel is not None:
            panel.prompt_box.prefill(f"/{name} ")
        return
    app.start_command(app.active_sid, SlashCommand(name))
