"""Untrusted text made inert for a terminal outside the TUI (paragents/terminal_text.py)."""

from __future__ import annotations

import pytest

from paragents.terminal_text import StreamCleaner, strip_controls

HOSTILE = (
    "a \x1b]0;TITLE\x07 b \x1b]52;c;Y2xpcA==\x1b\\ c \x1b[31mred\x1b[0m d \x9b2J e \x1bPdcs\x1b\\ f\x07\x00"
)


def test_strip_controls_removes_whole_sequences_and_keeps_newlines_and_tabs() -> None:
    assert strip_controls(HOSTILE) == "a  b  c red d  e  f"
    assert strip_controls("x\r\ny\rz\tw") == "x\ny\nz\tw"


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 13])
def test_a_sequence_cut_between_pieces_is_removed_whole(size: int) -> None:
    cleaner = StreamCleaner()
    pieces = [HOSTILE[i : i + size] for i in range(0, len(HOSTILE), size)]
    shown = "".join(cleaner.feed(p) for p in pieces) + cleaner.flush()
    assert shown == strip_controls(HOSTILE)
    assert "TITLE" not in shown and "Y2xpcA" not in shown and "dcs" not in shown


def test_an_unterminated_sequence_is_held_then_dropped_and_a_runaway_one_let_go() -> None:
    cleaner = StreamCleaner()
    assert cleaner.feed("ok \x1b]0;never ends") == "ok "
    assert cleaner.flush() == ""
    long = "\x1b]0;" + "x" * 5000
    assert "\x1b" not in cleaner.feed(long)  # not held for ever: removed as far as it went
