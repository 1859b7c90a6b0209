"""The paths an MCP tool call names, so they are checked as Read or Edit targets (issue 26 item 9).

An argument is a path when the tool's input schema declares it one (``format`` ``path``/``uri``...),
when its name says so (``path``, ``paths``, ``file``, ``filePath``, ``source``, ``destination``,
``directory`` ...), or when its value is a ``file:`` URI (whatever its name). Values may be strings
or lists of strings, also inside nested objects. A URL of another scheme is not a path.

Whatever an argument is called, its VALUE is a path when it looks like one (attack report, escape 13:
a read-only tool ``lookup(name)`` read ``~/.ssh/id_rsa`` in plan mode): an absolute path, ``~`` or
``~/...``, a ``file:`` URI, or a relative value that names an existing file outside the project
(``../../.ssh/id_rsa``). Free text (a value holding whitespace) is not taken for a path unless its
argument is named or declared one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

PATH_NAME = re.compile(
    r"(?:^|_)(?:path|paths|file|files|filename|filenames|dir|dirs|directory|directories|folder|folders|"
    r"root|roots|source|sources|destination|dest|target|cwd|workdir)$"
    r"|(?:Path|Paths|File|Files|Filename|Dir|Directory|Folder|Root|Source|Destination|Cwd)$",
    re.IGNORECASE,
)
"""Argument names that hold paths (``path``, ``file_path``, ``filePath``, ``source``, ``paths`` ...)."""
PATH_FORMATS = frozenset({"path", "file-path", "filepath", "uri", "uri-reference", "iri", "iri-reference"})
MAX_PATHS = 64
"""At most this many paths of one call are checked (past that the call asks)."""


def _declared(schema: Mapping[str, Any] | None, key: str) -> bool:
    """True when ``schema`` (an MCP tool's inputSchema) declares property ``key`` a path or URI."""
    if not isinstance(schema, Mapping):
        return False
    props = schema.get("properties")
    prop = props.get(key) if isinstance(props, Mapping) else None
    if not isinstance(prop, Mapping):
        return False
    items = prop.get("items")
    formats = [prop.get("format"), items.get("format") if isinstance(items, Mapping) else None]
    return any(isinstance(f, str) and f.lower() in PATH_FORMATS for f in formats)


def file_uri_path(value: str) -> str | None:
    """The local path of a ``file:`` URI (``file:///etc/passwd`` -> ``/etc/passwd``), else None."""
    if not value.lower().startswith("file:"):
        return None
    parts = urlsplit(value)
    if parts.netloc not in ("", "localhost"):
        return None
    return unquote(parts.path) or None


MAX_DEPTH = 4
"""Nested objects and lists are searched this deep."""
MAX_VALUE_CHARS = 4096


def value_is_path(value: str, exists_outside: Callable[[str], bool] | None = None) -> bool:
    """True when ``value`` looks like a path whatever its argument is called: absolute, ``~``-based,
    or (with ``exists_outside``) a relative value naming an existing file outside the project."""
    if not value or len(value) > MAX_VALUE_CHARS or any(ch.isspace() for ch in value) or "://" in value:
        return False
    if value.startswith(("/", "~")):
        return value == "~" or value.startswith("~/") or value.startswith("/")
    return exists_outside is not None and exists_outside(value)


def path_arguments(
    arguments: Mapping[str, Any],
    schema: Mapping[str, Any] | None = None,
    exists_outside: Callable[[str], bool] | None = None,
) -> list[str] | None:
    """The paths named by an MCP call's ``arguments`` (see the module doc), as written; None when
    there are more than :data:`MAX_PATHS`. ``exists_outside(value)``: does relative ``value`` name an
    existing file outside the project (then it is a path whatever its argument is called)."""
    found: list[str] = []

    def visit(value: Any, named: bool, depth: int) -> None:
        if isinstance(value, Mapping):
            if depth < MAX_DEPTH:
                for key, item in value.items():
                    visit(item, named or bool(PATH_NAME.search(str(key))), depth + 1)
            return
        if isinstance(value, list):
            if depth < MAX_DEPTH:
                for item in value:
                    visit(item, named, depth + 1)
            return
        if not isinstance(value, str) or not value or "\x00" in value:
            return
        local = file_uri_path(value)
        if local is None:
            if value.lower().startswith("file:"):
                return
            if not (named and "://" not in value) and not value_is_path(value, exists_outside):
                return
        path = local or value
        if path not in found:
            found.append(path)

    for key, value in arguments.items():
        visit(value, bool(PATH_NAME.search(str(key))) or _declared(schema, str(key)), 1)
    return found if len(found) <= MAX_PATHS else None
