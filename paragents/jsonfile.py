"""Read a JSON file (or JSON text) and, when it is bad, say where: one message shape for every loader.

``load(path)`` reads and parses a file; ``loads(text, where)`` parses text that came from ``where`` (a
file, a flag, a reply). Both raise :class:`JsonFileError` whose ``str()`` is one readable line naming
``where`` and, for bad JSON, the line and column::

    runtime_config.json: not valid JSON (line 3, column 5: Expecting ',' delimiter)
    runtime_config.json: cannot be read (Permission denied)

A missing file raises :class:`JsonFileMissing` (a subclass), so a loader that treats "absent" as
"empty" catches it first. Callers wrap the message in their own error and add what to do.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from paragents import treefiles


class JsonFileError(ValueError):
    """A JSON file cannot be read or is not valid JSON; ``str(err)`` names the file (and the line and
    column). ``problem`` is the message without ``where``; ``reason`` the message without either (e.g.
    ``Expecting value``); ``line`` and ``column`` are 1-based, None when the text was never parsed."""

    def __init__(
        self, where: str, problem: str, reason: str, line: int | None = None, column: int | None = None
    ):
        super().__init__(f"{where}: {problem}")
        self.where = where
        self.problem = problem
        self.reason = reason
        self.line = line
        self.column = column


class JsonFileMissing(JsonFileError):
    """The file does not exist."""


def read_text(path: Path, *, tree: Path | None = None) -> str:
    """Return the UTF-8 text of ``path``. Raises :class:`JsonFileMissing` when it does not exist and
    :class:`JsonFileError` when it cannot be read (a directory, no permission, not UTF-8). ``tree``: the
    file is in that tree a session can write (the project): read it only as a regular file, never
    through a symbolic link, a FIFO or a device (:mod:`paragents.treefiles`)."""
    try:
        if tree is not None:
            return treefiles.read_text(path, root=tree)
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise JsonFileMissing(str(path), "no such file", "no such file") from None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise JsonFileError(str(path), f"cannot be read ({reason})", reason) from None
    except UnicodeDecodeError as exc:
        reason = f"not UTF-8 text: {exc.reason} at byte {exc.start}"
        raise JsonFileError(str(path), f"cannot be read ({reason})", reason) from None


def loads(text: str, where: str) -> Any:
    """Parse ``text`` (which came from ``where``). Raises :class:`JsonFileError` naming ``where``, the
    line and the column when it is not valid JSON."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        problem = f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        raise JsonFileError(where, problem, exc.msg, exc.lineno, exc.colno) from None


def load(path: Path, *, tree: Path | None = None) -> Any:
    """Read and parse the JSON file ``path`` (see :func:`read_text` and :func:`loads` for the errors)."""
    return loads(read_text(path, tree=tree), str(path))
