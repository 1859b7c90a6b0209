"""Read-family tools: ``read_file``, ``list_dir``, ``glob`` and ``grep``.

They run their blocking file-system work in a worker thread (``asyncio.to_thread``) so the event
loop keeps serving other sessions; on cancellation the walk is told to stop and the
``CancelledError`` propagates. Output is plain text capped at ``ToolContext.max_output_chars``.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from wcmatch import glob as wcglob

from paragents import treefiles
from paragents.tools.base import Tool, ToolContext, ToolFamily, ToolResult
from paragents.tools.fsutil import SNIFF_BYTES, display, file_is_binary, looks_binary, resolve_path, walk
from paragents.tools.output import cap_tail, decode, strip_ansi

T = TypeVar("T")

MAX_READ_BYTES = 256 * 1024
"""read_file returns at most this many bytes of file text per call."""
DEFAULT_READ_LINES = 2000
"""read_file's default ``limit``, in lines."""
MAX_LINE_CHARS = 2000
"""Longer lines are cut in read_file output."""
MAX_LIST_ENTRIES = 1000
"""list_dir shows at most this many entries."""
MAX_GLOB_RESULTS = 500
"""glob shows at most this many paths."""
MAX_WALK_ENTRIES = 200_000
"""glob/grep stop walking after visiting this many entries."""
MAX_GREP_FILE_BYTES = 5 * 1024 * 1024
"""grep skips files larger than this."""
MAX_GREP_LINE_CHARS = 300
"""grep cuts matched lines to this many characters."""
GLOB_FLAGS = wcglob.GLOBSTAR | wcglob.BRACE | wcglob.DOTGLOB
"""wcmatch flags: ``**`` crosses directories, ``{a,b}`` alternatives, ``*`` matches dot files."""


async def _in_thread(fn: Callable[[threading.Event], T]) -> T:
    """Run ``fn(stop)`` in a worker thread; on cancellation set ``stop`` and re-raise."""
    stop = threading.Event()
    try:
        return await asyncio.to_thread(fn, stop)
    except asyncio.CancelledError:
        stop.set()
        raise


def _error(message: str) -> ToolResult:
    """Return an ``is_error`` result with ``message``."""
    return ToolResult(content=message, is_error=True)


def _missing_or_wrong(path: Path, raw: str, want_dir: bool) -> ToolResult | None:
    """Return an error result when ``path`` is missing or of the wrong kind, else None."""
    if not path.exists():
        kind = "directory" if want_dir else "file"
        return _error(f"{kind} not found: {raw} (resolved to {path}); check the path with list_dir or glob")
    if want_dir and not path.is_dir():
        return _error(f"not a directory: {raw}; use read_file to read a file")
    if not want_dir and path.is_dir():
        return _error(f"{raw} is a directory; use list_dir to see its entries")
    return None


class Withheld:
    """What ``grep``/``glob``/``list_dir`` left out of their results because the permission layer
    would not let the model read it (``ToolContext.read_check``): counted per reason, said in a note."""

    def __init__(self, check: Callable[[Path, Path], str | None] | None, root: Path) -> None:
        self.check = check
        self.root = root
        self.counts: dict[str, int] = {}

    def hides(self, path: Path) -> bool:
        """True (and counted) when ``path`` must not be shown."""
        if self.check is None:
            return False
        reason = self.check(self.root, path)
        if reason is None:
            return False
        self.counts[reason] = self.counts.get(reason, 0) + 1
        return True

    def note(self) -> str:
        """``[3 results withheld by Read deny rules]`` (one line per reason), or ""."""
        return "\n".join(
            f"[{n} result{'s' if n != 1 else ''} withheld {reason}]" for reason, n in self.counts.items()
        )

    def add_to(self, content: str) -> str:
        """``content`` with the note appended (when something was withheld)."""
        note = self.note()
        return f"{content}\n{note}" if note else content


class ReadFile(Tool):
    """``read_file(path, offset?, limit?)``: a text file with ``cat -n`` style line numbers."""

    name: ClassVar[str] = "read_file"
    family: ClassVar[ToolFamily] = "read"
    description: ClassVar[str] = (
        "Read a text file. Returns lines prefixed with their 1-based line numbers (cat -n style). "
        f"Reads up to {DEFAULT_READ_LINES} lines by default; use offset and limit for large files. "
        "Paths are relative to the working directory unless absolute. Binary files are refused."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "description": "File to read."},
            "offset": {"type": "integer", "minimum": 1, "description": "First line to show (1-based)."},
            "limit": {"type": "integer", "minimum": 1, "description": "How many lines to show."},
        },
        "required": ["path"],
        "additionalProperties": False,
    }

    def summarize(self, args: dict[str, Any]) -> str:
        """Return e.g. ``read_file src/app.py:10-40``."""
        where = str(args.get("path", ""))
        offset, limit = args.get("offset"), args.get("limit")
        if isinstance(offset, int) and isinstance(limit, int):
            where += f":{offset}-{offset + limit - 1}"
        elif isinstance(offset, int):
            where += f":{offset}-"
        elif isinstance(limit, int):
            where += f":1-{limit}"
        return self._line(where)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Read the file; errors for a missing file, a directory, a binary file or an offset past the end."""
        if ctx.execution is not None:  # a lane on another machine (paragents.tools.remote)
            return await ctx.execution.run_tool(self, args, ctx)
        raw = args["path"]
        path = resolve_path(ctx.workdir, raw)
        offset = int(args.get("offset") or 1)
        limit = int(args.get("limit") or DEFAULT_READ_LINES)
        result, digest = await _in_thread(
            lambda stop: self._read(path, raw, offset, limit, ctx.max_output_chars)
        )
        if digest is not None and ctx.on_read is not None:
            ctx.on_read(path, digest)
        return result

    def _read(
        self, path: Path, raw: str, offset: int, limit: int, max_chars: int
    ) -> tuple[ToolResult, str | None]:
        """Blocking part of :meth:`run`; returns the result and the file's sha256 (None on error)."""
        wrong = _missing_or_wrong(path, raw, want_dir=False)
        if wrong:
            return wrong, None
        digest = hashlib.sha256()
        shown: list[str] = []
        used_chars = 0
        used_bytes = 0
        total = 0
        cut_by_cap = False
        last_byte = b""
        budget = max(max_chars - 120, 1)
        try:
            # a regular file only, opened without following a link: a FIFO blocks forever, and a link
            # put there after the permission check (on the resolved path) is not what was allowed
            with os.fdopen(treefiles.open_regular(path), "rb") as fh:
                sample = fh.read(SNIFF_BYTES)
                if looks_binary(sample):
                    size = path.stat().st_size
                    return _error(
                        f"{raw} is a binary file ({size} bytes); read_file shows text files only"
                    ), None
                fh.seek(0)
                for line in fh:
                    digest.update(line)
                    total += 1
                    last_byte = line[-1:]
                    if total < offset or total >= offset + limit or cut_by_cap:
                        continue
                    text = strip_ansi(decode(line.rstrip(b"\r\n")))
                    if len(text) > MAX_LINE_CHARS:
                        text = text[:MAX_LINE_CHARS] + f" … [line cut at {MAX_LINE_CHARS} chars]"
                    row = f"{total:>6}\t{text}"
                    if shown and (
                        used_chars + len(row) + 1 > budget or used_bytes + len(line) > MAX_READ_BYTES
                    ):
                        cut_by_cap = True
                        continue
                    shown.append(row)
                    used_chars += len(row) + 1
                    used_bytes += len(line)
        except OSError as exc:
            return _error(f"cannot read {raw}: {exc.strerror or exc}"), None
        meta = {"path": str(path), "lines": total}
        if total == 0:
            return ToolResult(content=f"(empty file: {raw} has 0 lines)", meta=meta), digest.hexdigest()
        if not shown:
            return _error(
                f"offset {offset} is past the end of {raw}, which has {total} lines; use a smaller offset"
            ), None
        first, last = offset, offset + len(shown) - 1
        meta["shown"] = [first, last]
        content = "\n".join(shown)
        if last_byte != b"\n" and last == total:
            content += "\n[no newline at end of file]"
        if last < total:
            content += f"\n[truncated: showing lines {first}-{last} of {total}; use offset/limit]"
        return ToolResult(content=content, meta=meta), digest.hexdigest()


class ListDir(Tool):
    """``list_dir(path=".")``: a directory's entries, sorted, directories with a trailing ``/``."""

    name: ClassVar[str] = "list_dir"
    family: ClassVar[ToolFamily] = "read"
    description: ClassVar[str] = (
        "List a directory's entries sorted by name; directories end with '/', symlinks show "
        "'name -> target'. Defaults to the working directory."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "default": ".", "description": "Directory to list."},
        },
        "additionalProperties": False,
    }

    def summarize(self, args: dict[str, Any]) -> str:
        """Return e.g. ``list_dir src``."""
        return self._line(str(args.get("path", ".")))

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """List the directory; errors when it is missing or not a directory."""
        if ctx.execution is not None:  # a lane on another machine (paragents.tools.remote)
            return await ctx.execution.run_tool(self, args, ctx)
        raw = args.get("path", ".")
        path = resolve_path(ctx.workdir, raw)
        withheld = Withheld(ctx.read_check, path)
        return await _in_thread(lambda stop: self._list(path, raw, ctx.max_output_chars, withheld))

    def _list(self, path: Path, raw: str, max_chars: int, withheld: Withheld) -> ToolResult:
        """Blocking part of :meth:`run`."""
        wrong = _missing_or_wrong(path, raw, want_dir=True)
        if wrong:
            return wrong
        try:
            with os.scandir(path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            return _error(f"cannot list {raw}: {exc.strerror or exc}")
        entries = [e for e in entries if not withheld.hides(Path(e.path))]
        rows = []
        for entry in entries[:MAX_LIST_ENTRIES]:
            name = strip_ansi(entry.name)
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            row = name + ("/" if is_dir else "")
            if entry.is_symlink():
                try:
                    row += " -> " + strip_ansi(os.readlink(entry.path))
                except OSError:
                    row += " -> (unreadable link)"
            rows.append(row)
        if not rows:
            return ToolResult(content=withheld.add_to(f"(empty directory: {raw})"), meta={"entries": 0})
        note = f"[truncated: showing {len(rows)} of {len(entries)} entries; use glob to narrow]"
        content = "\n".join(rows)
        if len(entries) > len(rows):
            content += "\n" + note
        content = cap_tail(content, max_chars - len(note) - 1, note)
        return ToolResult(content=withheld.add_to(content), meta={"entries": len(entries)})


class Glob(Tool):
    """``glob(pattern, path=".")``: paths matching a glob, newest first."""

    name: ClassVar[str] = "glob"
    family: ClassVar[ToolFamily] = "read"
    description: ClassVar[str] = (
        "Find files and directories whose path (relative to 'path') matches a glob pattern. "
        "'*' stays within one directory, '**' crosses directories, '{a,b}' gives alternatives: "
        "e.g. '**/*.py', 'src/**/test_*.{js,ts}'. Results are relative to 'path', newest first; "
        "directories end with '/'. .git, node_modules, .venv and caches are skipped."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "minLength": 1, "description": "Glob pattern, e.g. '**/*.py'."},
            "path": {"type": "string", "minLength": 1, "default": ".", "description": "Directory to search."},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }

    def summarize(self, args: dict[str, Any]) -> str:
        """Return e.g. ``glob **/*.py in src``."""
        where = str(args.get("path", "."))
        return self._line(str(args.get("pattern", "")) + ("" if where == "." else f" in {where}"))

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Match the pattern; errors when the directory is missing or the pattern is absolute."""
        if ctx.execution is not None:  # a lane on another machine (paragents.tools.remote)
            return await ctx.execution.run_tool(self, args, ctx)
        pattern, raw = args["pattern"], args.get("path", ".")
        if pattern.startswith("/") or pattern.startswith("~"):
            return _error(f"glob pattern '{pattern}' must be relative; put the base directory in 'path'")
        root = resolve_path(ctx.workdir, raw)
        withheld = Withheld(ctx.read_check, root)
        return await _in_thread(
            lambda stop: self._glob(root, raw, pattern, ctx.max_output_chars, stop, withheld)
        )

    def _glob(
        self, root: Path, raw: str, pattern: str, max_chars: int, stop: threading.Event, withheld: Withheld
    ) -> ToolResult:
        """Blocking part of :meth:`run`."""
        wrong = _missing_or_wrong(root, raw, want_dir=True)
        if wrong:
            return wrong
        depth = None if "**" in pattern else pattern.count("/") + 1
        found: list[tuple[float, str]] = []
        visited = 0
        for path, is_dir in walk(root, stop, max_depth=depth):
            visited += 1
            if visited > MAX_WALK_ENTRIES:
                break
            rel = display(path, root)
            if wcglob.globmatch(rel, pattern, flags=GLOB_FLAGS) and not withheld.hides(path):
                try:
                    mtime = path.lstat().st_mtime
                except OSError:
                    continue
                found.append((mtime, rel + ("/" if is_dir else "")))
        if not found:
            content = withheld.add_to(f"No paths match '{pattern}' under {raw}")
            return ToolResult(content=content, meta={"matches": 0})
        found.sort(key=lambda item: (-item[0], item[1]))
        rows = [strip_ansi(rel) for _, rel in found[:MAX_GLOB_RESULTS]]
        header = "" if raw == "." else f"[paths relative to {raw}]\n"
        note = f"[truncated: showing {len(rows)} of {len(found)} matches; narrow the pattern]"
        content = header + "\n".join(rows)
        if len(found) > len(rows):
            content += "\n" + note
        if visited > MAX_WALK_ENTRIES:
            content += f"\n[search stopped after {MAX_WALK_ENTRIES} entries; narrow 'path']"
        content = cap_tail(content, max_chars - len(note) - 1, note)
        return ToolResult(content=withheld.add_to(content), meta={"matches": len(found)})


class Grep(Tool):
    """``grep(pattern, path=".", glob?, ignore_case?, max_results?)``: regex search, ``file:line: text``."""

    name: ClassVar[str] = "grep"
    family: ClassVar[ToolFamily] = "read"
    description: ClassVar[str] = (
        "Search file contents with a Python regular expression, line by line. Returns 'file:line: text' "
        "(files relative to 'path'). 'glob' filters files ('*.py' matches by file name at any depth; "
        "a pattern with '/' matches the relative path). Skips binary files, .git, node_modules, .venv."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "minLength": 1, "description": "Python regular expression."},
            "path": {
                "type": "string",
                "minLength": 1,
                "default": ".",
                "description": "File or directory to search.",
            },
            "glob": {
                "type": "string",
                "minLength": 1,
                "description": "Only search files matching this glob.",
            },
            "ignore_case": {"type": "boolean", "default": False, "description": "Case-insensitive match."},
            "max_results": {
                "type": "integer",
                "minimum": 1,
                "maximum": 1000,
                "default": 100,
                "description": "Stop after this many matching lines.",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }

    def summarize(self, args: dict[str, Any]) -> str:
        """Return e.g. ``grep /def main/ in src (*.py)``."""
        text = f"/{args.get('pattern', '')}/"
        if args.get("path", ".") != ".":
            text += f" in {args.get('path')}"
        if args.get("glob"):
            text += f" ({args['glob']})"
        return self._line(text)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Search; errors for a bad regex or a missing path."""
        if ctx.execution is not None:  # a lane on another machine (paragents.tools.remote)
            return await ctx.execution.run_tool(self, args, ctx)
        pattern = args["pattern"]
        flags = re.IGNORECASE if args.get("ignore_case") else 0
        try:
            regex = re.compile(pattern, flags)
        except re.error as exc:
            where = f" at position {exc.pos}" if exc.pos is not None else ""
            return _error(f"invalid regex '{pattern}': {exc.msg}{where} (Python 're' syntax)")
        raw = args.get("path", ".")
        root = resolve_path(ctx.workdir, raw)
        max_results = int(args.get("max_results") or 100)
        file_glob = args.get("glob")
        withheld = Withheld(ctx.read_check, root)
        return await _in_thread(
            lambda stop: self._grep(
                root, raw, regex, file_glob, max_results, ctx.max_output_chars, stop, withheld
            )
        )

    def _files(self, root: Path, file_glob: str | None, stop: threading.Event) -> list[tuple[Path, str]]:
        """Return ``(path, display name)`` of the files to search under directory ``root``."""
        files = []
        for visited, (path, is_dir) in enumerate(walk(root, stop)):
            if visited >= MAX_WALK_ENTRIES:
                break
            if is_dir or path.is_symlink() or not path.is_file():
                continue
            rel = display(path, root)
            if file_glob is not None:
                target = rel if "/" in file_glob else path.name
                if not wcglob.globmatch(target, file_glob, flags=GLOB_FLAGS):
                    continue
            files.append((path, rel))
        return files

    def _grep(
        self,
        root: Path,
        raw: str,
        regex: re.Pattern[str],
        file_glob: str | None,
        max_results: int,
        max_chars: int,
        stop: threading.Event,
        withheld: Withheld,
    ) -> ToolResult:
        """Blocking part of :meth:`run`."""
        if not root.exists():
            return _error(f"path not found: {raw} (resolved to {root}); check it with list_dir or glob")
        files = [(root, raw)] if root.is_file() else self._files(root, file_glob, stop)
        files = [(path, shown) for path, shown in files if not withheld.hides(path)]
        rows: list[str] = []
        skipped_large = 0
        hit_limit = False
        for path, shown in files:
            if stop.is_set() or hit_limit:
                break
            try:
                if path.stat().st_size > MAX_GREP_FILE_BYTES:
                    skipped_large += 1
                    continue
                if file_is_binary(path):
                    continue
                text = decode(path.read_bytes())
            except OSError:
                continue
            for lineno, line in enumerate(text.split("\n"), 1):
                if regex.search(line):
                    if len(rows) >= max_results:
                        hit_limit = True
                        break
                    clean = strip_ansi(line.rstrip("\r"))
                    if len(clean) > MAX_GREP_LINE_CHARS:
                        clean = clean[:MAX_GREP_LINE_CHARS] + " …"
                    rows.append(f"{strip_ansi(shown)}:{lineno}: {clean}")
        if not rows:
            content = f"No matches for /{regex.pattern}/ in {raw}"
            if file_glob:
                content += f" (files matching {file_glob})"
            return ToolResult(content=withheld.add_to(content), meta={"matches": 0})
        content = ("" if raw == "." or root.is_file() else f"[files relative to {raw}]\n") + "\n".join(rows)
        note = f"[stopped at max_results={max_results}; narrow the search or raise max_results]"
        if hit_limit:
            content += "\n" + note
        if skipped_large:
            content += f"\n[skipped {skipped_large} files larger than {MAX_GREP_FILE_BYTES} bytes]"
        cap_note = "[truncated: output too long; narrow the search]"
        content = cap_tail(content, max_chars - len(cap_note) - 1, cap_note)
        return ToolResult(content=withheld.add_to(content), meta={"matches": len(rows), "limited": hit_limit})
