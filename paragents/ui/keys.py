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
