"""File-system helpers shared by the file tools: path resolution, binary sniffing, hashing, and a
directory walk that skips version-control and dependency folders."""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
    }
)
"""Directory names never descended into by glob/grep (they are still searched when given as the root)."""

SNIFF_BYTES = 8192
"""How many leading bytes are inspected to decide whether a file is binary."""


def resolve_path(workdir: Path, raw: str) -> Path:
    """Return the absolute, symlink-resolved path for ``raw`` as the model wrote it.

    ``~`` is expanded; a relative path is taken from ``workdir``; absolute paths are allowed (the
    permission policy decides about them). Never raises for a missing path."""
    path = Path(os.path.expanduser(raw))
    if not path.is_absolute():
        path = workdir / path
    return path.resolve()


def looks_binary(sample: bytes) -> bool:
    """Return True when ``sample`` (a file's first bytes) looks binary: it holds a NUL byte, or more
    than 30% of it is neither valid UTF-8 text nor common whitespace."""
    if b"\x00" in sample:
        return True
    if not sample:
        return False
    text = sample.decode("utf-8", errors="replace")
    bad = sum(1 for ch in text if ch == "\ufffd" or (ord(ch) < 32 and ch not in "\t\n\r\f\b\x1b"))
    return bad > 0.3 * len(text)


def file_is_binary(path: Path) -> bool:
    """Return True when the file at ``path`` looks binary (see :func:`looks_binary`).

    Raises OSError when it cannot be read."""
    with path.open("rb") as fh:
        return looks_binary(fh.read(SNIFF_BYTES))


def sha256_bytes(data: bytes) -> str:
    """Return the sha256 hex digest of ``data``."""
    return hashlib.sha256(data).hexdigest()


def walk(
    root: Path, stop: threading.Event | None = None, max_depth: int | None = None
) -> Iterator[tuple[Path, bool]]:
    """Yield ``(path, is_dir)`` for everything under ``root`` (not ``root`` itself), in sorted order
    per directory, skipping :data:`SKIP_DIRS` below the root and not following directory symlinks.

    ``max_depth`` limits how deep to go (1 = entries of ``root`` only). Stops early when ``stop``
    is set (used when the awaiting task was cancelled). Unreadable directories are skipped."""
    root_depth = len(root.parts)
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        if stop is not None and stop.is_set():
            return
        base = Path(dirpath)
        depth = len(base.parts) - root_depth + 1
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for d in dirnames:
            yield base / d, True
        for f in sorted(filenames):
            yield base / f, False
        if max_depth is not None and depth >= max_depth:
            dirnames[:] = []


def display(path: Path, base: Path) -> str:
    """Return ``path`` relative to ``base`` with ``/`` separators when it is inside ``base``, else
    the absolute path."""
    try:
        return path.relative_to(base).as_posix() or "."
    except ValueError:
        return str(path)
