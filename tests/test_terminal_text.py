"""Untrusted text made inert for a terminal outside the TUI (paragents/terminal_text.py)."""

from __future__ import annotations

import unicodedata

import pytest

from paragents.terminal_text import StreamCleaner, hidden_symbols, show_controls, strip_controls

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


def test_show_controls_draws_every_hidden_character_and_drops_none() -> None:
    """What a person approves is shown whole: each control or invisible format character becomes a
    visible symbol (nothing removed), newline and tab stay, and the result holds no control character."""
    every = "".join(chr(c) for c in range(0xA0)) + "\u200b\u200d\u202e\u2066\ufeff"
    shown = show_controls(every)
    assert not any(
        unicodedata.category(ch) in ("Cc", "Cf") for ch in shown.replace("\n", "").replace("\t", "")
    )
    assert shown.count("\n") == 1 and shown.count("\t") == 1
    assert show_controls("a\x1b[2Jb\x07\r\x00\x7f") == "a\u241b[2Jb\u2407\u240d\u2400\u2421"
    assert show_controls("\x9b31m \u202e") == "<U+009B>31m <U+202E>"
    assert len(hidden_symbols(every)) == 30 + 33 + 5  # C0 but newline and tab, DEL and C1, the 5 others
    assert show_controls("plain: ls -la | grep x") == "plain: ls -la | grep x"
