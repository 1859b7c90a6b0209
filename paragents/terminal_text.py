"""Untrusted text made inert for a terminal: escape sequences and control characters removed.

Model output, tool output and file contents may hold CSI/OSC sequences (a title change, an OSC 52
clipboard write, a cursor move) or bare C0/C1 control characters. Everything printed to a terminal
outside the TUI (``paragents run``, ``inbox``, ``permissions check``) goes through
:func:`strip_controls`; the TUI's ``ui/text.clean`` starts from it and also evens out cell widths."""

from __future__ import annotations

import re

ANSI = re.compile(
    r"""
    \x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?   # OSC ... BEL / ST
    | \x1b[P^_X][^\x1b]*(?:\x1b\\)?      # DCS / PM / APC / SOS ... ST
    | \x1b\[[0-?]*[ -/]*[@-~]           # CSI
    | \x1b[ -/]*[0-~]                    # other two/three-byte escapes
    | \x9b[0-?]*[ -/]*[@-~]              # 8-bit CSI
    """,
    re.VERBOSE,
)
"""Whole escape sequences (removed as a unit, so no visible remains such as ``]0;title``)."""
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""C0/C1 control characters other than newline and tab."""


def strip_controls(text: str) -> str:
    """``text`` without escape sequences and control characters; ``\\n`` and ``\\t`` kept, a lone
    ``\\r`` read as a newline (a progress bar cannot overwrite a line). Never raises."""
    text = ANSI.sub("", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return CONTROL.sub("", text)


_OPEN_STRING = re.compile(r"\x1b[\]P^_X](?:(?!\x07|\x1b\\).)*\Z", re.S)
_OPEN_CSI = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*\Z")
_OPEN_ESC = re.compile(r"\x1b[ -/]*\Z")
MAX_HELD = 4096
"""An unterminated sequence longer than this is let go (removed up to there) instead of held."""


class StreamCleaner:
    """:func:`strip_controls` for text that arrives in pieces: an escape sequence cut between two
    pieces (``\\x1b]0;PWN`` + ``ED\\x07``) is held until it ends, so it is removed whole instead of
    leaving ``ED`` on the screen."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, piece: str) -> str:
        """The printable part of everything fed so far that is certainly not inside a sequence."""
        text = self._held + piece
        self._held = ""
        start = max(text.rfind("\x1b"), text.rfind("\x9b"))
        if start >= 0 and len(text) - start <= MAX_HELD:
            tail = text[start:]
            if _OPEN_STRING.match(tail) or _OPEN_CSI.match(tail) or _OPEN_ESC.match(tail):
                text, self._held = text[:start], tail
        return strip_controls(text)

    def flush(self) -> str:
        """What is still held (an unterminated sequence at the end: removed)."""
        text, self._held = self._held, ""
        return strip_controls(text)
