"""Untrusted text is shown without markup or terminal control sequences."""

from __future__ import annotations

from paragents.ui.core.text import clean, safe_text, shorten, tail


def test_clean_strips_escape_sequences_and_controls() -> None:
    raw = "\x1b[31mred\x1b[0m \x1b]0;evil title\x07ok\x1b[2J\x07\x08 tab\there\r\nnext\rover"
    assert clean(raw) == "red ok tab    here\nnext\nover"


def test_safe_text_keeps_markup_literal() -> None:
    text = safe_text("[bold red]not markup[/] 🚀 宽")
    assert text.plain == "[bold red]not markup[/] 🚀 宽"
    assert not text.spans


def test_shorten_and_tail() -> None:
    assert shorten("a\nb  c", 10) == "a b c"
    assert shorten("x" * 20, 5) == "xxxx…"
    shown, cut = tail("line1\nline2\nline3", 8)
    assert cut + len(shown) == len("line1\nline2\nline3")
    assert shown == "line3"


def test_flags_in_a_row_stay_apart() -> None:
    """Two flags in a row read as two country codes, not one word ("FRJP")."""
    assert clean("vote \U0001f1eb\U0001f1f7\U0001f1ef\U0001f1f5!") == "vote [FR][JP]!"
