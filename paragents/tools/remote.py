"""The tools' work done through an :class:`~paragents.tools.execution.Execution` (a lane in a container
or a Pod): :func:`run_remote`, called by each tool's ``run`` when its context has one.

Same arguments, checks and output as on this machine, by running the tools' own code on a private
temporary copy of exactly what the call needs: ``read_file`` / ``edit_file`` / ``write_file`` fetch
the file into a temporary folder, run the tool's code on it and send a changed file back; ``glob``
lists the lane's tree and runs on an empty copy of it (names, kinds, mtimes); ``grep`` also fetches
the candidate files' contents (regular files up to grep's size cap; symbolic links are not followed,
as here). Nothing of this machine is read or written for the lane: a path outside the lane's root is
refused, and the temporary copy never holds a symbolic link (a link the lane made stays a name).

Paths are taken from the session's working directory as written, without following links here (the
lane resolves them inside its own place); the policy and the conflict checker see the same local
paths (:attr:`~paragents.tools.execution.Execution.root`) as for a local lane."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import re
import tempfile
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from wcmatch import glob as wcglob

from paragents.models import CallPreview
from paragents.tools.base import Tool, ToolContext, ToolResult, bounded_lines
from paragents.tools.edit import EditFile, WriteFile
from paragents.tools.execution import Entry, Execution, ExecutionError
from paragents.tools.files import (
    DEFAULT_READ_LINES,
    GLOB_FLAGS,
    MAX_GREP_FILE_BYTES,
    MAX_LIST_ENTRIES,
    Glob,
    Grep,
    ListDir,
    ReadFile,
    Withheld,
)
from paragents.tools.output import cap_tail, strip_ansi
from paragents.tools.shell import OutputCapture, RunCommand

MAX_REMOTE_FILE = 64 * 1024 * 1024
"""The largest lane file read_file / edit_file / write_file fetch (bigger: read it in parts with a
command)."""
MAX_REMOTE_GREP_BYTES = 64 * 1024 * 1024
"""Bytes of file contents one grep fetches from a lane (the rest is named as not searched)."""


def _error(message: str, **meta: Any) -> ToolResult:
    return ToolResult(content=message, is_error=True, meta=meta)


def locate(ctx: ToolContext, raw: str) -> tuple[Path, str] | str:
    """``(local path, lane path)`` of the path ``raw`` as the model wrote it (``~`` expanded, taken
    from the working directory, ``..`` applied as written: no link here is followed), or the message
    refusing a path outside the lane."""
    ex = ctx.execution
    assert ex is not None
    root = os.path.normpath(str(ex.root))
    joined = os.path.normpath(os.path.join(str(ctx.workdir), os.path.expanduser(raw)))
    if joined == root:
        rel = "."
    elif joined.startswith(root + os.sep):
        rel = joined[len(root) + 1 :].replace(os.sep, "/")
    else:
        return (
            f"{raw} is outside the lane: this session's files are in {ex.where}, where only the lane's own "
            f"files ({root}) can be reached; give a path inside it"
        )
    local = Path(os.path.realpath(root))
    return (local if rel == "." else local / rel), rel


async def run_remote(tool: Tool, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Do ``tool``'s call through ``ctx.execution`` (see the module docstring; the execution facet's
    ``run_tool``). A lane that does not answer gives an ``is_error`` result saying so
    (``meta["unreachable"]``)."""
    runner = _RUNNERS.get(tool.name)
    if runner is None:
        return _error(f"{tool.name} cannot run in a lane on another machine")
    try:
        return await runner(tool, args, ctx)
    except ExecutionError as exc:
        return _error(str(exc), unreachable=exc.reason == "unreachable", sandboxed=True)


def _outside_cwd(ctx: ToolContext, cwd: str) -> str:
    """``run_command``'s message for a ``cwd`` outside the working directory (as here)."""
    return f"cwd '{cwd}' must be a directory inside the working directory {ctx.workdir.resolve()}"


async def preview_remote(tool: Tool, args: dict[str, Any], ctx: ToolContext) -> CallPreview | None:
    """``tool.preview`` of a call that will run through ``ctx.execution``, computed on a temporary copy
    of the lane's target file (never on this machine's worktree, where a link the lane made could
    lead to a file of this machine); a command's directory is named as the lane's."""
    ex = ctx.execution
    assert ex is not None
    raw = args.get("path") if tool.name in ("write_file", "edit_file") else None
    if isinstance(raw, str):
        found = locate(ctx, raw)
        if isinstance(found, str):
            return CallPreview("note", problem=found)
        _, rel = found
        with tempfile.TemporaryDirectory(prefix="paragents-remote-") as tmp:
            copy = Path(tmp) / rel
            copy.parent.mkdir(parents=True, exist_ok=True)
            await _fetch(ex, rel, copy)
            shown = await asyncio.to_thread(tool.preview, {**args, "path": rel}, Path(tmp))
        if shown is None:
            return None
        local = str(Path(os.path.realpath(ex.root)))
        return dataclasses.replace(
            shown, detail=shown.detail.replace(str(Path(tmp)), local) if shown.detail else shown.detail
        )
    if tool.name == "run_command":
        cwd = args.get("cwd")
        found = locate(ctx, cwd or ".")
        text, omitted = bounded_lines(str(args["command"]))
        timeout = args.get("timeout")
        detail = "bash -c" + (f", timeout {timeout:g} s" if timeout else "")
        if isinstance(found, str):
            problem = _outside_cwd(ctx, cwd) if cwd else found
            return CallPreview("command", text, detail, omitted=omitted, problem=problem)
        return CallPreview("command", text, detail, cwd=f"{found[1]} in {ex.where}", omitted=omitted)
    return None


# --- files -------------------------------------------------------------------------------------------


async def _fetch(ex: Execution, rel: str, into: Path) -> None:
    """Make ``into`` what the lane's ``rel`` is: the file's bytes, an empty folder for a directory,
    nothing when it does not exist. Raises ExecutionError for anything else."""
    try:
        into.write_bytes(await ex.read(rel, limit=MAX_REMOTE_FILE))
    except ExecutionError as exc:
        if exc.reason == "directory":
            into.mkdir()
        elif exc.reason != "missing":
            raise


async def _read_file(tool: ReadFile, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    raw = args["path"]
    found = locate(ctx, raw)
    if isinstance(found, str):
        return _error(found)
    local, rel = found
    assert ctx.execution is not None
    try:
        data = await ctx.execution.read(rel, limit=MAX_REMOTE_FILE)
    except ExecutionError as exc:
        if exc.reason == "missing":
            return _error(
                f"file not found: {raw} (resolved to {local}); check the path with list_dir or glob"
            )
        if exc.reason == "directory":
            return _error(f"{raw} is a directory; use list_dir to see its entries")
        raise
    offset = int(args.get("offset") or 1)
    limit = int(args.get("limit") or DEFAULT_READ_LINES)
    with tempfile.TemporaryDirectory(prefix="paragents-remote-") as tmp:
        copy = Path(tmp) / "file"
        copy.write_bytes(data)
        result, digest = await asyncio.to_thread(tool._read, copy, raw, offset, limit, ctx.max_output_chars)
    if "path" in result.meta:
        result.meta["path"] = str(local)
    if digest is not None and ctx.on_read is not None:
        ctx.on_read(local, digest)
    return result


async def _write_file(tool: WriteFile, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return await _change_file(
        ctx, args["path"], lambda copy: tool._write(copy, args["path"], args["content"], ctx.max_output_chars)
    )


async def _edit_file(tool: EditFile, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return await _change_file(ctx, args["path"], lambda copy: tool._edit(copy, args, ctx.max_output_chars))


async def _change_file(
    ctx: ToolContext, raw: str, change: Callable[[Path], tuple[ToolResult, str | None]]
) -> ToolResult:
    """Fetch the lane's file into a private copy, let the local tool ``change`` it (in a thread), and
    send it back when it was written: one round trip each way, whatever the tool."""
    found = locate(ctx, raw)
    if isinstance(found, str):
        return _error(found)
    local, rel = found
    assert ctx.execution is not None
    with tempfile.TemporaryDirectory(prefix="paragents-remote-") as tmp:
        copy = Path(tmp) / "file"
        await _fetch(ctx.execution, rel, copy)
        result, digest = await asyncio.to_thread(change, copy)
        if result.written_paths:
            await ctx.execution.write(rel, copy.read_bytes())
            result.written_paths = [local]
    if digest is not None and ctx.on_write is not None:
        ctx.on_write(local, digest)
    return result


# --- listings ----------------------------------------------------------------------------------------


async def _entries(
    ctx: ToolContext, raw: str, depth: int, skip: bool = True
) -> tuple[Path, list[Entry]] | ToolResult:
    found = locate(ctx, raw)
    if isinstance(found, str):
        return _error(found)
    local, rel = found
    assert ctx.execution is not None
    try:
        return local, await ctx.execution.entries(rel, depth=depth, skip=skip)
    except ExecutionError as exc:
        if exc.reason == "missing":
            return _error(
                f"directory not found: {raw} (resolved to {local}); check the path with list_dir or glob"
            )
        if exc.reason == "other":
            return _error(f"not a directory: {raw}; use read_file to read a file")
        raise


def _withheld(ctx: ToolContext, local: Path, copy: Path) -> Withheld:
    """The ``Withheld`` of a listing done on ``copy`` (a temporary copy of the lane's ``local``):
    ``ctx.read_check`` is asked about the local paths, as for a lane here."""
    check = ctx.read_check
    if check is None:
        return Withheld(None, copy)

    def mapped(_root: Path, path: Path) -> str | None:
        try:
            rel = path.relative_to(copy)
        except ValueError:
            rel = Path(path.name)
        return check(local, local / rel)

    return Withheld(mapped, copy)


async def _list_dir(tool: ListDir, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    raw = args.get("path", ".")
    listed = await _entries(ctx, raw, 1, skip=False)
    if isinstance(listed, ToolResult):
        return listed
    withheld = _withheld(ctx, listed[0], listed[0])
    entries = sorted((e for e in listed[1] if not withheld.hides(listed[0] / e.path)), key=lambda e: e.path)
    rows = []
    for entry in entries[:MAX_LIST_ENTRIES]:
        row = strip_ansi(entry.path) + ("/" if entry.is_dir else "")
        if entry.kind == "l":
            row += " -> " + strip_ansi(entry.link)
        rows.append(row)
    if not rows:
        return ToolResult(content=withheld.add_to(f"(empty directory: {raw})"), meta={"entries": 0})
    note = f"[truncated: showing {len(rows)} of {len(entries)} entries; use glob to narrow]"
    content = "\n".join(rows)
    if len(entries) > len(rows):
        content += "\n" + note
    content = cap_tail(content, ctx.max_output_chars - len(note) - 1, note)
    return ToolResult(content=withheld.add_to(content), meta={"entries": len(entries)})


def _skeleton(root: Path, entries: list[Entry], contents: dict[str, bytes] | None = None) -> None:
    """An empty copy of a listed tree under ``root``: folders (a link to a folder is a folder, which
    is not entered, as ``walk`` does not enter it), empty files with their mtimes, files in
    ``contents`` with their bytes, and files of other sizes as sparse files of that size (so size
    checks see the lane's size). Never a symbolic link. The mtimes are set last, deepest first (making
    an entry changes its folder's mtime)."""
    ordered = sorted(entries, key=lambda e: e.path.count("/"))
    for entry in ordered:
        path = root / entry.path
        try:
            if entry.is_dir:
                path.mkdir()
            else:
                with path.open("xb") as fh:
                    if contents is not None and entry.path in contents:
                        fh.write(contents[entry.path])
                    elif entry.kind == "f" and contents is not None:
                        fh.truncate(entry.size)
        except OSError:
            continue
    for entry in reversed(ordered):
        with contextlib.suppress(OSError):
            os.utime(root / entry.path, (entry.mtime, entry.mtime), follow_symlinks=False)


async def _glob(tool: Glob, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    pattern, raw = args["pattern"], args.get("path", ".")
    if pattern.startswith("/") or pattern.startswith("~"):
        return _error(f"glob pattern '{pattern}' must be relative; put the base directory in 'path'")
    depth = 0 if "**" in pattern else pattern.count("/") + 1
    listed = await _entries(ctx, raw, depth)
    if isinstance(listed, ToolResult):
        return listed
    with tempfile.TemporaryDirectory(prefix="paragents-remote-") as tmp:
        _skeleton(Path(tmp), listed[1])
        stop = threading.Event()
        withheld = _withheld(ctx, listed[0], Path(tmp))
        return await asyncio.to_thread(
            tool._glob, Path(tmp), raw, pattern, ctx.max_output_chars, stop, withheld
        )


async def _grep(tool: Grep, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    pattern = args["pattern"]
    try:
        regex = re.compile(pattern, re.IGNORECASE if args.get("ignore_case") else 0)
    except re.error as exc:
        where = f" at position {exc.pos}" if exc.pos is not None else ""
        return _error(f"invalid regex '{pattern}': {exc.msg}{where} (Python 're' syntax)")
    raw = args.get("path", ".")
    max_results = int(args.get("max_results") or 100)
    file_glob = args.get("glob")
    found = locate(ctx, raw)
    if isinstance(found, str):
        return _error(found)
    local, rel = found
    ex = ctx.execution
    assert ex is not None
    stop = threading.Event()
    with tempfile.TemporaryDirectory(prefix="paragents-remote-") as tmp:
        try:
            entries = await ex.entries(rel, depth=0)
        except ExecutionError as exc:
            if exc.reason == "missing":
                return _error(f"path not found: {raw} (resolved to {local}); check it with list_dir or glob")
            if exc.reason != "other":
                raise
            one = Path(tmp) / (Path(rel).name or "file")
            withheld = _withheld(ctx, local, one)
            if withheld.check is not None and withheld.check(one, one) is not None:
                one.touch()  # withheld: its contents never leave the lane
            else:
                await _fetch(ex, rel, one)
            return await asyncio.to_thread(
                tool._grep, one, raw, regex, file_glob, max_results, ctx.max_output_chars, stop, withheld
            )
        withheld = _withheld(ctx, local, Path(tmp))
        wanted = []
        for entry in entries:
            if entry.kind != "f" or entry.size > MAX_GREP_FILE_BYTES:
                continue
            if ctx.read_check is not None and ctx.read_check(local, local / entry.path) is not None:
                continue  # withheld: its contents never leave the lane (grep counts it below)
            target = entry.path if file_glob is None or "/" in file_glob else entry.path.rsplit("/", 1)[-1]
            if file_glob is None or wcglob.globmatch(target, file_glob, flags=GLOB_FLAGS):
                wanted.append(entry.path)
        contents = await ex.contents(rel, wanted, limit=MAX_REMOTE_GREP_BYTES) if wanted else {}
        _skeleton(Path(tmp), entries, contents)
        result = await asyncio.to_thread(
            tool._grep, Path(tmp), raw, regex, file_glob, max_results, ctx.max_output_chars, stop, withheld
        )
    missed = len(wanted) - len(contents)
    if missed and not result.is_error:
        result.content += (
            f"\n[not searched: {missed} file(s) past the {MAX_REMOTE_GREP_BYTES // 2**20} MiB a search "
            "fetches from the lane, or changed meanwhile; narrow 'path' or 'glob']"
        )
    return result


# --- commands ----------------------------------------------------------------------------------------


async def _run_command(tool: RunCommand, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    ex = ctx.execution
    assert ex is not None
    command: str = args["command"]
    timeout = float(args.get("timeout") or ctx.command_timeout)
    cwd = args.get("cwd")
    found = locate(ctx, cwd or ".")
    if isinstance(found, str):
        return _error(_outside_cwd(ctx, cwd) if cwd else found)
    rel = found[1]
    capture = OutputCapture(ctx.max_output_chars)
    run = await ex.run(
        command,
        cwd=rel,
        env=ctx.env,
        timeout=timeout,
        on_output=capture.feed,
        max_output=ctx.max_output_chars,
    )
    if run.missing_cwd:
        return _error(f"cwd '{cwd}' is not an existing directory under the working directory", sandboxed=True)
    result = tool._result(capture, ctx, run.code, timeout, run.timed_out, False, run.duration_s)
    result.meta["sandboxed"] = True
    result.meta["where"] = ex.where
    if run.code != 0:
        result.content += f"\n[ran in {ex.where}]"
    return result


_RUNNERS: dict[str, Callable[[Any, dict[str, Any], ToolContext], Awaitable[ToolResult]]] = {
    "read_file": _read_file,
    "write_file": _write_file,
    "edit_file": _edit_file,
    "list_dir": _list_dir,
    "glob": _glob,
    "grep": _grep,
    "run_command": _run_command,
}
