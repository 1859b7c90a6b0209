"""What an ask shows and what it leaves out, for every place a person approves from (the phone page,
the TUI inbox, ``paragents inbox``): issue 28 item 3 found a ``curl … | sh`` on line 306 of a
command that no screen showed, with ``omitted: 0`` in the row.

:func:`whole_call` is everything the call will do (a command in full, else every argument in full),
from the call's own arguments, which the store's row keeps whole; :func:`not_shown` says plainly
how much of a bounded preview is left out. Nothing here imports Textual or aiohttp."""

from __future__ import annotations

import json
import re
from typing import Any

from paragents.models import CallPreview
from paragents.tools.base import PREVIEW_LINE_CHARS

COMMAND_TOOLS = ("run_command", "Bash")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Control characters (escape sequences start with one) except newline and tab."""


def plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def arguments_of(arguments: str | None) -> dict[str, Any]:
    """A call's arguments (JSON text) as a dict; {} when they are not a JSON object."""
    try:
        args = json.loads(arguments or "{}")
    except ValueError:
        return {}
    return args if isinstance(args, dict) else {}


def command_of(tool: str, arguments: str | None) -> str | None:
    """The whole shell command of a command call (``run_command``), else None."""
    command = arguments_of(arguments).get("command")
    return command if tool in COMMAND_TOOLS and isinstance(command, str) else None


def whole_call(tool: str, arguments: str | None) -> str:
    """Everything the call will do, as plain text: a command in full; else each argument on its own
    line (``name: value``), a value with several lines under its name, nothing cut."""
    command = command_of(tool, arguments)
    if command is not None:
        cwd = arguments_of(arguments).get("cwd")
        return command + (f"\n(in {cwd})" if isinstance(cwd, str) and cwd else "")
    args = arguments_of(arguments)
    if not args:
        return arguments or ""
    out = []
    for name, value in args.items():
        text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
        out.append(f"{name}:\n{text}" if "\n" in text else f"{name}: {text}")
    return "\n".join(out)


def not_shown(preview: CallPreview | None) -> str:
    """How much of a bounded ``preview`` is left out, as a plain phrase ("6 more lines and the end of
    1 long line not shown"), or "" when it shows everything it holds."""
    if preview is None:
        return ""
    cut = sum(
        1 for line in preview.text.splitlines() if len(line) == PREVIEW_LINE_CHARS + 1 and line.endswith("…")
    )
    parts = []
    if preview.omitted:
        parts.append(plural(preview.omitted, "more line"))
    if cut:
        parts.append(f"the end of {plural(cut, 'long line')}")
    return " and ".join(parts) + " not shown" if parts else ""


def size_of(text: str) -> str:
    """``12 lines, 3,456 characters``: how big a whole call is."""
    return f"{plural(text.count(chr(10)) + 1, 'line')}, {len(text):,} characters"


def printable(text: str) -> str:
    """``text`` safe to print on a terminal: control characters (escape sequences) removed, newlines
    and tabs kept."""
    return _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
