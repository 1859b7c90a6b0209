"""Session names: what a name may be (:func:`check_name`) and a free name from a base
(:func:`unique_name`). Nothing here imports Textual."""

from __future__ import annotations

import re
from collections.abc import Container

from paragents.sessions.view import SessionError

MAX_NAME = 40
_NAME_RE = re.compile(r"^[^\s\x00-\x1f\x7f!-,/:-@\[-^`{-~\u202a-\u202e\u2066-\u2069]{1,40}$")
"""Session names: 1-40 characters, no whitespace, control characters or ASCII punctuation other than
'.', '_' and '-' (letters of any script, digits and emoji are fine)."""
_NAME_HELP = "use 1-40 letters, digits, emoji, '.', '_' or '-' (no spaces, not starting with '-')"


def check_name(name: str) -> str:
    """Return ``name`` when it is a valid session name. Raises SessionError saying what is allowed."""
    if not _NAME_RE.match(name) or name.startswith("-"):  # "-rf", "--help" would read as options
        raise SessionError(f"bad session name {name!r}: {_NAME_HELP}")
    return name


def unique_name(base: str, taken: Container[str]) -> str:
    """Return ``base`` when it is free, else the first free ``base-2``, ``base-3``... (``base`` cut so
    that the name stays within MAX_NAME characters)."""
    if base not in taken:
        return base
    n = 2
    while (name := f"{base[: MAX_NAME - len(str(n)) - 1]}-{n}") in taken:
        n += 1
    return name


def next_number_name(taken: Container[str], prefix: str = "s") -> str:
    """The first free ``s1``, ``s2``... (not ``s<count + 1>``, which skips numbers after a close)."""
    n = 1
    while f"{prefix}{n}" in taken:
        n += 1
    return f"{prefix}{n}"
