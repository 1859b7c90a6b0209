"""Safe display of untrusted text (model output, tool output, file contents) in the UI.

Model and tool text is never parsed as Textual/Rich markup: it is wrapped in ``rich.text.Text``.
Terminal control sequences (CSI/OSC/other ESC sequences and C0/C1 control characters other than
newline and tab) are removed so output cannot move the cursor, change the title or ring the bell.

Cell widths: rich measures a grapheme cluster as one glyph (``👨‍👩‍👧`` and ``🇫🇷`` are 2 cells, ``⚠️``
with VS16 is 2), while tmux and most terminals add up the width of each code point (the family is
6 cells, the flag 4, ``⚠️`` 1); where they disagree every cell after the text moves and the panel's
right border is drawn out of line. :func:`clean` therefore leaves only text whose width is the same
both ways: format characters (ZWJ, variation selectors, bidi controls, zero-width spaces, soft
hyphens, tag characters) and emoji skin-tone modifiers are removed, so a ZWJ sequence shows as its
members and ``⚠️`` as ``⚠``, and regional-indicator letters (flags) become ASCII capitals in
brackets (``🇫🇷🇯🇵`` -> ``[FR][JP]``, not ``FRJP``). ``tests/ui/test_text.py`` checks that rich and
wcwidth agree on the result.
"""

from __future__ import annotations

import re

from rich.text import Text
from textual.content import Content

from paragents.terminal_text import ANSI, CONTROL
from paragents.ui.core.glyphs import glyphs

_ANSI = ANSI
_CONTROL = CONTROL
_WIDTH_UNSAFE = re.compile(
    "[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufe00-\ufe0f\ufeff"
    "\ufff9-\ufffb\U0001f3fb-\U0001f3ff\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)
"""Format characters (ZWJ/ZWNJ, variation selectors, bidi controls, zero-width and soft hyphens,
tags) and skin-tone modifiers: code points whose width depends on their neighbours."""
_REGIONAL = {0x1F1E6 + i: chr(ord("A") + i) for i in range(26)}
"""Regional-indicator letters (flags are pairs of them) -> ASCII capitals."""
_FLAG = re.compile("[\U0001f1e6-\U0001f1ff]{1,2}")
"""A flag (a pair of regional-indicator letters; a lone one too): shown as ``[FR]``."""


def clean(text: str) -> str:
    """Return ``text`` without terminal escape sequences and control characters.

    Keeps ``\\n`` and ``\\t`` (tabs become 4 spaces); a lone ``\\r`` becomes a newline so progress bars
    do not overwrite lines; text whose cell width terminals and rich disagree on is made
    unambiguous (see the module doc). Never raises."""
    text = _ANSI.sub("", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ")
    text = _CONTROL.sub("", text)
    if not text.isascii():
        text = _WIDTH_UNSAFE.sub("", text)
        text = _FLAG.sub(lambda m: f"[{m.group().translate(_REGIONAL)}]", text)
    return text


def safe_text(text: str, style: str = "") -> Text:
    """Return a rich ``Text`` of the cleaned ``text`` (no markup parsing), folding very long words."""
    return Text(clean(text), style=style, overflow="fold", no_wrap=False)


def plain(text: str, style: str = "") -> Content:
    """Return the cleaned ``text`` as Textual ``Content`` shown literally (for titles, labels and
    anything that takes a str as markup: ``Collapsible(title=...)``, ``Button`` labels)."""
    return Content.styled(clean(text), style) if style else Content(clean(text))


def shorten(text: str, limit: int) -> str:
    """Return the cleaned ``text`` cut to ``limit`` characters (one line: newlines become spaces);
    a cut text ends with the glyph set's ellipsis."""
    one = " ".join(clean(text).split())
    if len(one) <= limit:
        return one
    mark = glyphs().ellipsis
    return one[: max(limit - len(mark), 0)] + mark


def tail(text: str, limit: int) -> tuple[str, int]:
    """Return ``(last limit chars of text, number of chars left out before them)``."""
    if len(text) <= limit:
        return text, 0
    cut = len(text) - limit
    newline = text.find("\n", cut)
    if 0 <= newline < cut + 200:
        cut = newline + 1
    return text[cut:], cut
