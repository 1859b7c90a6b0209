"""Untrusted text made inert for a terminal: escape sequences and control characters removed.

Model output, tool output and file contents may hold CSI/OSC sequences (a title change, an OSC 52
clipboard write, a cursor move) or bare C0/C1 control characters. Everything printed to a terminal
outside the TUI (``paragents run``, ``inbox``, ``permissions check``) goes through
:func:`strip_controls`; the TUI's ``ui/text.clean`` starts from it and also evens out cell widths.

What a person approves (a command, a call's arguments) is shown by :func:`show_controls` instead:
nothing removed, every control character and invisible format character drawn as a visible symbol,
so what is shown is what will run."""

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


_HIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064"
    "\u2066-\u206f\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]"
)
"""Characters a terminal does not draw as themselves: C0/C1 controls other than newline and tab, DEL,
and format characters (soft hyphen, zero-width spaces and joiners, bidi marks and overrides, line and
paragraph separators, tags)."""


def _symbol(char: str) -> str:
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)  # Control Pictures: ESC "␛", BEL "␇", CR "␍", NUL "␀"
    if code == 0x7F:
        return "\u2421"  # "␡"
    return f"<U+{code:04X}>"  # C1 (8-bit CSI) and format characters: no control picture exists


def show_controls(text: str) -> str:
    """``text`` with nothing removed and nothing hidden: each control character as its Control
    Pictures symbol (ESC ``␛``, BEL ``␇``, CR ``␍``), DEL as ``␡``, a C1 control or an invisible
    format character as its code point (``<U+009B>``, ``<U+202E>``); newline and tab kept. For what
    a person approves (``paragents inbox --show``, the approval bar's command, the whole call):
    printed, it changes nothing on the terminal, and every character of the original can be read
    off it. Never raises."""
    return _HIDDEN.sub(lambda m: _symbol(m.group()), text)


def hidden_symbols(text: str) -> list[str]:
    """The symbol :func:`show_controls` draws for each hidden character of ``text``, in order."""
    return [_symbol(char) for char in _HIDDEN.findall(text)]
