"""Output to a terminal that went away is dropped instead of hanging the app.

Textual writes the screen through a writer thread fed by a bounded queue. When the terminal goes
away (``tmux kill-server``, a closed ssh session) the thread's write fails with EIO and the thread
ends; the queue then fills and the next write blocks the event loop for good. SIGHUP and SIGTERM
could no longer quit the app (their handlers run on that loop), and the process lived on holding its
sessions (found by a fresh user in tmux). :func:`drop_output_when_the_terminal_is_gone` makes every
write, and the driver's final stop, give up once the writer thread has ended."""

from __future__ import annotations

import queue
from typing import Any

WAIT_S = 0.25
"""How long one attempt to queue output waits before checking that the writer thread still runs."""


def drop_output_when_the_terminal_is_gone(driver: Any) -> bool:
    """Wrap ``driver``'s writer thread (Textual's LinuxDriver) so that writes and its stop never block
    once the thread has ended; False when the driver has no such thread (headless, Windows)."""
    thread = getattr(driver, "_writer_thread", None)
    pending: queue.Queue[str | None] | None = getattr(thread, "_queue", None)
    if thread is None or pending is None or getattr(thread, "_paragents_guarded", False):
        return False

    def write(text: str) -> None:
        while thread.is_alive():
            try:
                pending.put(text, timeout=WAIT_S)
                return
            except queue.Full:
                continue
        # the writer thread ended: nobody reads the queue any more; what is written is lost anyway

    def guarded_stop() -> None:
        while thread.is_alive():
            try:
                pending.put(None, timeout=WAIT_S)
                break
            except queue.Full:
                continue
        thread.join(timeout=WAIT_S * 4)

    thread.write = write
    thread.stop = guarded_stop
    thread._paragents_guarded = True
    return True
