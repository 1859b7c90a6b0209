"""The paths an MCP tool call names, so they are checked as Read or Edit targets (issue 26 item 9).

An argument is a path when the tool's input schema declares it one (``format`` ``path``/``uri``...),
when its name says so (``path``, ``paths``, ``file``, ``filePath``, ``source``, ``destination``,
``directory`` ...), or when its value is a ``file:`` URI (whatever its name). Values may be strings
or lists of strings. A URL of another scheme is not a path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
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


def path_arguments(arguments: Mapping[str, Any], schema: Mapping[str, Any] | None = None) -> list[str] | None:
    """The paths named by an MCP call's ``arguments`` (top-level keys; see the module doc), as
    written; None when there are more than :data:`MAX_PATHS`."""
    found: list[str] = []
    for key, value in arguments.items():
        named = bool(PATH_NAME.search(str(key))) or _declared(schema, str(key))
        values = value if isinstance(value, list) else [value]
        for item in values:
            if not isinstance(item, str) or not item or "\x00" in item:
                continue
            local = file_uri_path(item)
            if local is None and (not named or "://" in item):  # a URL (file://host/x too) is no path
                continue
            path = local or item
            if path not in found:
                found.append(path)
    return found if len(found) <= MAX_PATHS else None
