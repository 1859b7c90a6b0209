"""Lane-relative paths: what the file methods of every backend accept."""

from __future__ import annotations

import posixpath

from paragents.backends.base import BackendError


def lane_relative(path: str) -> str:
    """Return ``path`` normalised relative to the lane's root (``.`` for the root itself).

    Refused with BackendError: absolute paths, ``..`` components, NUL characters and empty paths; a
    backend never touches anything outside its lane through its file methods."""
    if not path or "\x00" in path:
        raise BackendError(f"{path!r} is not a path inside the lane")
    if path.startswith("/") or path.startswith("~"):
        raise BackendError(f"{path!r} is absolute: give a path relative to the lane's root")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise BackendError(f"{path!r} leaves the lane ('..' is not allowed)")
    return posixpath.join(*parts) if parts else "."
