"""The symbols the UI draws around untrusted text (status marks, separators, pointers), in two sets.

:data:`UNICODE` (the default) uses only characters that every terminal draws one cell wide: none is
East-Asian-ambiguous (terminals set to "ambiguous is wide" draw those two cells) and none can be shown
as an emoji (``⚠``, ``▶``, ``▪`` are; a terminal or font that draws them as emoji makes them two cells
wide, shifting the border after them). :data:`ASCII` is the fallback chosen by the ``ascii_glyphs``
config field, for terminals or fonts that lack even those. ``tests/ui/test_glyphs.py`` checks both sets
against wcwidth's tables.

The set in use is process-wide (:func:`use_ascii`, set by ``make_app`` from the config); widgets call
:func:`glyphs` when they draw, so every widget drawn afterwards follows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Glyphs:
    """One set of UI symbols. ``status`` maps a tool call status to its mark."""

    warn: str
    """Something needs the user (title "needs you", approval bar)."""
    stop: str
    """A conflict holds a call."""
    sep: str
    """Separator between fields of a one-line title."""
    ellipsis: str
    """End of a shortened text."""
    pointer: str
    """The selected row of a list."""
    collapsed: str
    """A collapsed block (click to open)."""
    expanded: str
    """An open block."""
    earlier: str
    """The "show earlier" button."""
    icon: str
    """The header's icon."""
    queued: str
    """A queued prompt."""
    remove: str
    """Remove a queued prompt."""
    prompt: str
    """Before a user prompt in the transcript."""
    status: dict[str, str] = field(default_factory=dict)


UNICODE = Glyphs(
    warn="⚑",
    stop="⊘",
    sep="∙",
    ellipsis="…",
    pointer="▸",
    collapsed="▸",
    expanded="▾",
    earlier="▴",
    icon="⊛",
    queued="⧗",
    remove="✕",
    prompt="›",
    status={
        "pending": "◦",
        "asking": "?",
        "running": "◉",
        "ok": "✓",
        "error": "✗",
        "denied": "⊘",
        "cancelled": "∎",
        "skipped": "∎",
        "interrupted": "↯",
    },
)
"""The default set. ``…`` (East-Asian-ambiguous) is kept as the ellipsis: rich itself ends cut text
with it, so avoiding it here alone would not keep it off the screen."""

ASCII = Glyphs(
    warn="!",
    stop="x",
    sep="|",
    ellipsis="...",
    pointer=">",
    collapsed=">",
    expanded="v",
    earlier="^",
    icon="#",
    queued="~",
    remove="x",
    prompt=">",
    status={
        "pending": ".",
        "asking": "?",
        "running": "*",
        "ok": "+",
        "error": "x",
        "denied": "/",
        "cancelled": "-",
        "skipped": "-",
        "interrupted": "!",
    },
)
"""The ``ascii_glyphs`` set: printable ASCII only."""

_current: list[Glyphs] = [UNICODE]


def glyphs() -> Glyphs:
    """The set in use."""
    return _current[0]


def use_ascii(on: bool) -> None:
    """Use :data:`ASCII` (``on``) or :data:`UNICODE` from now on."""
    _current[0] = ASCII if on else UNICODE
