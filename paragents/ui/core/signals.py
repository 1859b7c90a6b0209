"""SIGTERM and SIGHUP quit the app as ctrl+q does (the interactive app and the demo install them)."""

from __future__ import annotations

import asyncio
import signal
from typing import Any

QUIT_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""Signals that quit the app as ctrl+q does (the terminal closed, ``kill``, ``tmux kill-pane``)."""


def quit_on_signals(app: Any) -> Any:
    """Make SIGTERM and SIGHUP quit ``app`` as ctrl+q does, at once (the partial reply is saved, the
    terminal restored); without this they killed the process mid-stream with the terminal still in
    the alternate screen. Returns a function that removes the handlers."""
    loop = asyncio.get_running_loop()

    def quit_now() -> None:
        app.call_next(app.action_quit, True)

    for sig in QUIT_SIGNALS:
        loop.add_signal_handler(sig, quit_now)

    def remove() -> None:
        for sig in QUIT_SIGNALS:
            loop.remove_signal_handler(sig)

    return remove
