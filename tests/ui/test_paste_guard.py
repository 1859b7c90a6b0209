"""A bracketed paste that contains ESC (coloured text) stays one paste: Textual's parser would read the
ESC as a key sequence and type the rest as keys, each newline an Enter that sends a prompt."""

from __future__ import annotations

from textual import events
from textual._xterm_parser import XTermParser

from paragents.ui.core.keys import ESC_SHOWN, PasteGuard, use_paste_guard

PASTE = "line one\n\x1b[31mred\x1b[0m line two\nline three"


def parse(chunks: list[str]) -> list[object]:
    parser = XTermParser()
    out: list[object] = []
    for chunk in chunks:
        out.extend(parser.feed(chunk))
    return out


def test_a_paste_with_esc_arrives_as_one_paste_with_the_esc_shown_not_as_keys() -> None:
    use_paste_guard()
    data = "a\x1b[200~" + PASTE + "\x1b[201~b"
    for chunks in ([data], [data[:14], data[14:30], data[30:-3], data[-3:]], list(data)):  # any split
        got = parse(chunks)
        pastes = [e for e in got if isinstance(e, events.Paste)]
        keys = [e.key for e in got if isinstance(e, events.Key)]
        assert [p.text for p in pastes] == [PASTE.replace("\x1b", ESC_SHOWN)], chunks
        assert keys == ["a", "b"], chunks  # no Enter, no typed remainder


def test_the_guard_leaves_everything_outside_a_paste_alone() -> None:
    guard = PasteGuard()
    assert guard.filter("\x1b") == "\x1b"  # the Esc key
    assert guard.filter("\x1b[A") == "\x1b[A"  # an arrow
    assert guard.filter("\x1b[200~x\x1b[20") == "\x1b[200~x"  # a split end marker waits...
    assert guard.filter("1~y") == "\x1b[201~y"  # ...until it is whole
