"""A terminal that went away never hangs the app (ui/core/terminal_gone.py): Textual's real writer thread,
writing to a file that fails as a closed pty does (EIO), ends; every later write and the driver's
stop must return instead of blocking on the full queue (before: the app's loop blocked for good, and
SIGHUP/SIGTERM could no longer quit it)."""

from __future__ import annotations

import errno
import threading
from types import SimpleNamespace
from typing import Any

import pytest
from textual.drivers._writer_thread import MAX_QUEUED_WRITES, WriterThread

from paragents.ui.core.terminal_gone import drop_output_when_the_terminal_is_gone


class ClosedPty:
    """A terminal whose other end is gone: every write fails with EIO."""

    def write(self, text: str) -> int:
        raise OSError(errno.EIO, "Input/output error")

    def flush(self) -> None:
        return None

    def fileno(self) -> int:
        return 1


def ended_writer() -> WriterThread:
    thread = WriterThread(ClosedPty())  # type: ignore[arg-type]
    thread.start()
    thread.write("first frame")  # its write fails: the thread ends
    thread.join()
    assert not thread.is_alive()
    return thread


def returns(work: Any) -> bool:
    """True when ``work()`` returns (run in a thread, so a hang fails the test instead of hanging it;
    without the guard the writes block for good on the full queue)."""
    done = threading.Event()

    def run() -> None:
        work()
        done.set()

    threading.Thread(target=run, daemon=True).start()
    return done.wait(30)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # the EIO ending it
def test_writes_after_the_terminal_went_away_are_dropped_not_blocking() -> None:
    thread = ended_writer()
    assert drop_output_when_the_terminal_is_gone(SimpleNamespace(_writer_thread=thread))

    def many_writes() -> None:
        for _ in range(MAX_QUEUED_WRITES * 3):
            thread.write("frame")
        thread.stop()

    assert returns(many_writes)


def test_a_driver_without_a_writer_thread_is_left_alone() -> None:
    assert not drop_output_when_the_terminal_is_gone(SimpleNamespace())
    assert not drop_output_when_the_terminal_is_gone(None)
