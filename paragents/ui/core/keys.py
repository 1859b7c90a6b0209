"""Alt+digit keys in terminals that send ESC + digit (tmux, xterm-style terminals).

Such terminals send alt+1 as the two bytes ``ESC 1``. Textual's input table maps those sequences to
the characters macOS's Option key types on a US layout (``ESC 1`` → "¡", ``ESC 2`` → "™", …, for
WezTerm on macOS), so alt+1 would type "¡" into the prompt instead of focusing panel 1.
:func:`use_alt_digit_keys` maps ``ESC <digit>`` to the key ``alt+<digit>`` instead. A "¡" typed as a
character (a terminal that sends the character itself) still types "¡".
"""

from __future__ import annotations

from typing import NamedTuple


class _KeyName(NamedTuple):
    """Stands for a ``textual.keys.Keys`` member in Textual's sequence table (it reads ``.value``)."""

    value: str


def use_alt_digit_keys() -> None:
    """Make Textual's terminal parser report ``ESC <digit>`` as ``alt+<digit>`` (process-wide,
    idempotent). Textual has no public hook for its sequence table, so this edits the table the
    parser reads (``textual._ansi_sequences.ANSI_SEQUENCES_KEYS``)."""
    from textual._ansi_sequences import ANSI_SEQUENCES_KEYS

    for digit in "0123456789":
        ANSI_SEQUENCES_KEYS[f"\x1b{digit}"] = (_KeyName(f"alt+{digit}"),)  # type: ignore[index]


PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"
ESC_SHOWN = "\u241b"
"""What an ESC inside a bracketed paste becomes ("␛"): text, never the start of a key sequence."""


def _held_back(data: str, marker: str) -> int:
    """How many characters at the end of ``data`` could be the start of ``marker`` (split across reads)."""
    for size in range(min(len(marker) - 1, len(data)), 0, -1):
        if marker.startswith(data[-size:]):
            return size
    return 0


class PasteGuard:
    """Keeps a bracketed paste whole: Textual's parser reads an ESC inside a paste (pasted coloured
    text, ``\\x1b[31m``) as the start of a key sequence and reissues what follows as key presses, so
    the rest of the paste lands out of order and each newline in it is an Enter that sends a prompt.
    :meth:`filter` turns every ESC between ``ESC[200~`` and ``ESC[201~`` into "␛" before the parser
    sees it (an end marker split across two reads is held back until it is whole)."""

    def __init__(self) -> None:
        self.in_paste = False
        self.pending = ""
        """A possible start of the end marker, held back until the next read."""
        self.recent = ""
        """The last characters passed on outside a paste: a start marker split across reads."""

    def filter(self, data: str) -> str:
        """Return ``data`` with the ESCs inside bracketed pastes made inert (see the class docstring)."""
        data, self.pending = self.pending + data, ""
        out: list[str] = []
        i = 0
        while i < len(data):
            if not self.in_paste:  # passed on as it comes (a lone ESC is the Esc key: never held)
                seen = self.recent + data[i:]
                start = seen.find(PASTE_START)
                if start < 0:
                    out.append(data[i:])
                    self.recent = seen[-(len(PASTE_START) - 1) :]
                    break
                after = start + len(PASTE_START) - len(self.recent)  # in data[i:]
                out.append(data[i : i + after])
                self.in_paste, self.recent, i = True, "", i + after
                continue
            end = data.find(PASTE_END, i)
            if end < 0:
                keep = _held_back(data[i:], PASTE_END)
                out.append(data[i : len(data) - keep].replace("\x1b", ESC_SHOWN))
                self.pending = data[len(data) - keep :]
                break
            out.append(data[i:end].replace("\x1b", ESC_SHOWN) + PASTE_END)
            self.in_paste, i = False, end + len(PASTE_END)
        return "".join(out)


def use_paste_guard() -> None:
    """Put a :class:`PasteGuard` in front of every terminal parser of this process (idempotent).
    Textual has no hook for it, so this wraps ``XTermParser.feed``."""
    from textual._xterm_parser import XTermParser

    if getattr(XTermParser.feed, "_paste_guard", False):
        return
    original = XTermParser.feed

    def feed(self: XTermParser, data: str) -> object:
        guard = self.__dict__.setdefault("_paste_guard", PasteGuard())
        filtered = guard.filter(data)
        if data and not filtered:  # all held back: feeding "" would tell the parser the input ended
            return ()
        return original(self, filtered)

    feed._paste_guard = True  # type: ignore[attr-defined]
    XTermParser.feed = feed  # type: ignore[method-assign,assignment]
