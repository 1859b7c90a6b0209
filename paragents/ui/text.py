"""Safe display of untrusted text (model output, tool output, file contents) in the UI.

Model and tool text is never parsed as Textual/Rich markup: it is wrapped in ``rich.text.Text``.
Terminal control sequences (CSI/OSC/other ESC sequences and C0/C1 control characters other than
newline and tab) are removed so output cannot move the cursor, change the title or ring the bell.
"""

from __future__ import annotations

import re

from rich.text import Text

_ANSI = re.compile(
    r"""
    \x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?   # OSC ... BEL / ST
    | \x1b[P^_X][^\x1b]*(?:\x1b\\)?      # DCS / PM / APC / SOS ... ST
    | \x1b\[[0-?]*[ -/]*[@-~]           # CSI
    | \x1b[ -/]*[0-~]                    # other two/three-byte escapes
    | \x9b[0-?]*[ -/]*[@-~]              # 8-bit CSI
    """,
    re.VERBOSE,
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(text: str) -> str:
    """Return ``text`` without terminal escape sequences and control characters.

    Keeps ``\\n`` and ``\\t`` (tabs become 4 spaces); a lone ``\\r`` becomes a newline so progress bars
    do not overwrite lines. Never raises."""
    text = _ANSI.sub("", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ")
    return _CONTROL.sub("", text)


def safe_text(text: str, style: str = "") -> Text:
    """Return a rich ``Text`` of the cleaned ``text`` (no markup parsing), folding very long words."""
    return Text(clean(text), style=style, overflow="fold", no_wrap=False)


def shorten(text: str, limit: int) -> str:
    """Return the cleaned ``text`` cut to ``limit`` characters (one line: newlines become spaces)."""
    one = " ".join(clean(text).split())
    return one if len(one) <= limit else one[: max(limit - 1, 0)] + "…"


def tail(text: str, limit: int) -> tuple[str, int]:
    """Return ``(last limit chars of text, number of chars left out before them)``."""
    if len(text) <= limit:
        return text, 0
    cut = len(text) - limit
    newline = text.find("\n", cut)
    if 0 <= newline < cut + 200:
        cut = newline + 1
    return text[cut:], cut
