"""Edit-family tools: ``write_file`` and ``edit_file``.

Both write atomically (a temporary file in the same directory, then ``os.replace``), keep an
existing file's permission bits, write through symlinks to their target, and return a unified
diff (``difflib``) of the change in ``ToolResult.diff``. Text is UTF-8.
"""

from __future__ import annotations

import asyncio
import difflib
import os
import secrets
from pathlib import Path
from typing import Any, ClassVar

from paragents import treefiles
from paragents.models import CallPreview
from paragents.tools.base import Tool, ToolContext, ToolFamily, ToolResult, bounded_lines
from paragents.tools.fsutil import looks_binary, resolve_path, sha256_bytes
from paragents.tools.output import cap_middle, strip_ansi

EDIT_LIMIT = 256 * 1024 * 1024
"""The largest file the edit tools read before changing it (256 MiB)."""


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: readers see the old or the new content, never a mix.

    Creates missing parent directories. An existing file keeps its permission bits; a new file
    gets the usual ``0o666 & ~umask``. Raises OSError on failure (the temporary file is removed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def unified_diff(old: str, new: str, label: str, created: bool = False) -> str:
    """Return the unified diff from ``old`` to ``new`` with ``a/label`` / ``b/label`` headers
    (``/dev/null`` as the old side when ``created``), marking a missing final newline the way
    ``diff -u`` does. Returns "" when the texts are equal."""
    old_lines = old.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    out = []
    for line in difflib.unified_diff(
        old_lines, new_lines, fromfile="/dev/null" if created else f"a/{label}", tofile=f"b/{label}"
    ):
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _count_changes(diff: str) -> tuple[int, int]:
    """Return (added, removed) line counts of a unified diff."""
    added = removed = 0
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


def _error(message: str) -> ToolResult:
    return ToolResult(content=message, is_error=True)


def diff_preview(diff: str, detail: str) -> CallPreview:
    """Return a "diff" preview of ``diff`` (bounded) with ``detail`` and the +/- counts."""
    added, removed = _count_changes(diff)
    text, omitted = bounded_lines(diff)
    return CallPreview("diff", text, f"{detail} (+{added} -{removed} lines)", omitted=omitted)


class WriteFile(Tool):
    """``write_file(path, content)``: create or overwrite a UTF-8 text file."""

    name: ClassVar[str] = "write_file"
    family: ClassVar[ToolFamily] = "edit"
    description: ClassVar[str] = (
        "Create or overwrite a text file with exactly 'content' (UTF-8). Missing parent directories "
        "are created. Prefer edit_file for changing part of an existing file."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "description": "File to write."},
            "content": {"type": "string", "description": "The complete new content of the file."},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    }

    def summarize(self, args: dict[str, Any]) -> str:
        """Return e.g. ``write_file src/app.py (12 lines)``."""
        content = args.get("content")
        lines = f" ({len(content.splitlines())} lines)" if isinstance(content, str) else ""
        return self._line(f"{args.get('path', '')}{lines}")

    def preview(self, args: dict[str, Any], workdir: Path) -> CallPreview:
        """The diff against the existing file, or the head and size of a new file."""
        raw, content = args["path"], args["content"]
        path = resolve_path(workdir, raw)
        size = f"{len(content.splitlines())} lines, {len(content.encode('utf-8'))} bytes"
        if path.is_dir():
            return CallPreview("note", detail=str(path), problem=f"{raw} is a directory")
        if not path.exists():
            text, omitted = bounded_lines(content)
            return CallPreview("content", text, f"new file {path}: {size}", omitted=omitted)
        try:
            old = treefiles.read_bytes(path, limit=EDIT_LIMIT)  # never a FIFO, nor through a link
        except OSError as exc:
            return CallPreview("note", detail=str(path), problem=f"cannot read it: {exc.strerror or exc}")
        if looks_binary(old[:8192]):
            return CallPreview(
                "note", detail=f"replaces the binary file {path} ({len(old)} bytes) with {size}"
            )
        if old == content.encode("utf-8"):
            return CallPreview("note", detail=f"{path} already has this content (no change)")
        diff = unified_diff(old.decode("utf-8", errors="replace"), content, raw)
        return diff_preview(diff, f"overwrites {path}: now {size}")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Write the file; errors when the path is a directory or cannot be written."""
        if ctx.execution is not None:  # a lane on another machine (paragents.tools.remote)
            return await ctx.execution.run_tool(self, args, ctx)
        raw, content = args["path"], args["content"]
        path = resolve_path(ctx.workdir, raw)
        result, digest = await asyncio.to_thread(self._write, path, raw, content, ctx.max_output_chars)
        if digest is not None and ctx.on_write is not None:
            ctx.on_write(path, digest)
        return result

    def _write(self, path: Path, raw: str, content: str, max_chars: int) -> tuple[ToolResult, str | None]:
        """Blocking part of :meth:`run`; returns the result and the new content's sha256 (or None)."""
        if path.is_dir():
            return _error(f"{raw} is a directory; give a file path"), None
        created = not path.exists()
        old_bytes = b"" if created else None
        if old_bytes is None:
            try:
                old_bytes = treefiles.read_bytes(path, limit=EDIT_LIMIT)  # never a FIFO, nor a link
            except OSError as exc:
                return _error(f"cannot read the existing {raw}: {exc.strerror or exc}"), None
        data = content.encode("utf-8")
        if not created and old_bytes == data:
            return ToolResult(
                content=f"No change: {raw} already has this content", meta={"changed": False}
            ), (sha256_bytes(data))
        try:
            atomic_write(path, data)
        except OSError as exc:
            return _error(f"cannot write {raw}: {exc.strerror or exc}"), None
        if looks_binary(old_bytes[:8192]):
            diff = f"Binary file {raw} replaced by text\n"
        else:
            diff = unified_diff(old_bytes.decode("utf-8", errors="replace"), content, raw, created=created)
        added, removed = _count_changes(diff)
        lines = len(content.splitlines())
        if created:
            summary = f"Created {raw} ({lines} lines, {len(data)} bytes)"
        else:
            summary = f"Updated {raw} (+{added} -{removed} lines; now {lines} lines, {len(data)} bytes)"
        return ToolResult(
            content=summary,
            diff=cap_middle(diff, max_chars),
            written_paths=[path],
            meta={"created": created, "changed": True, "added": added, "removed": removed},
        ), sha256_bytes(data)


class EditFile(Tool):
    """``edit_file(path, old_string, new_string, replace_all=false)``: exact string replacement."""

    name: ClassVar[str] = "edit_file"
    family: ClassVar[ToolFamily] = "edit"
    description: ClassVar[str] = (
        "Replace an exact string in a text file. 'old_string' must match the file exactly (including "
        "indentation) and occur once, unless replace_all is true. Read the file first. Returns a diff."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "description": "File to edit."},
            "old_string": {"type": "string", "minLength": 1, "description": "Exact text to replace."},
            "new_string": {"type": "string", "description": "Replacement text."},
            "replace_all": {
                "type": "boolean",
                "default": False,
                "description": "Replace every occurrence instead of requiring exactly one.",
            },
        },
        "required": ["path", "old_string", "new_string"],
        "additionalProperties": False,
    }

    def summarize(self, args: dict[str, Any]) -> str:
        """Return e.g. ``edit_file src/app.py (all)``."""
        return self._line(f"{args.get('path', '')}{' (all)' if args.get('replace_all') else ''}")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Edit the file; errors when it is missing, binary, not UTF-8, or old_string is missing,
        not unique (without replace_all) or equal to new_string."""
        if ctx.execution is not None:  # a lane on another machine (paragents.tools.remote)
            return await ctx.execution.run_tool(self, args, ctx)
        path = resolve_path(ctx.workdir, args["path"])
        result, digest = await asyncio.to_thread(self._edit, path, args, ctx.max_output_chars)
        if digest is not None and ctx.on_write is not None:
            ctx.on_write(path, digest)
        return result

    def preview(self, args: dict[str, Any], workdir: Path) -> CallPreview:
        """The unified diff the edit will make (computed, not written), or why it will fail."""
        path = resolve_path(workdir, args["path"])
        plan = self._plan(path, args)
        if isinstance(plan, str):
            return CallPreview("note", detail=str(path), problem=plan)
        text, updated, count = plan
        times = f"{count} occurrence{'s' if count != 1 else ''}"
        return diff_preview(unified_diff(text, updated, args["path"]), f"edits {path}: replaces {times}")

    def _plan(self, path: Path, args: dict[str, Any]) -> tuple[str, str, int] | str:
        """Return (current text, edited text, replacements) for the edit, or an error message."""
        raw, old, new = args["path"], args["old_string"], args["new_string"]
        replace_all = bool(args.get("replace_all", False))
        if old == new:
            return "old_string and new_string are identical; nothing to change"
        if not path.exists():
            return f"file not found: {raw}; use write_file to create it"
        if path.is_dir():
            return f"{raw} is a directory; give a file path"
        try:
            data = treefiles.read_bytes(path, limit=EDIT_LIMIT)  # never a FIFO, nor through a link
        except OSError as exc:
            return f"cannot read {raw}: {exc.strerror or exc}"
        if looks_binary(data[:8192]):
            return f"{raw} is a binary file; edit_file edits UTF-8 text only"
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return f"{raw} is not valid UTF-8 (byte {exc.start}); edit_file edits UTF-8 text only"
        count = text.count(old)
        if count == 0 and "\r\n" in text and "\n" in old and "\r\n" not in old:
            # The file uses CRLF line endings; the model almost always writes LF.
            old, new = old.replace("\n", "\r\n"), new.replace("\r\n", "\n").replace("\n", "\r\n")
            count = text.count(old)
        if count == 0:
            return f"old_string not found in {raw}; read the file again and copy the text exactly"
        if count > 1 and not replace_all:
            return (
                f"old_string occurs {count} times in {raw}; add surrounding context to make it unique "
                "or set replace_all"
            )
        updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
        return text, updated, count if replace_all else 1

    def _edit(self, path: Path, args: dict[str, Any], max_chars: int) -> tuple[ToolResult, str | None]:
        """Blocking part of :meth:`run`; returns the result and the new content's sha256 (or None)."""
        raw = args["path"]
        plan = self._plan(path, args)
        if isinstance(plan, str):
            return _error(plan), None
        text, updated, replaced = plan
        data_new = updated.encode("utf-8")
        try:
            atomic_write(path, data_new)
        except OSError as exc:
            return _error(f"cannot write {raw}: {exc.strerror or exc}"), None
        diff = unified_diff(text, updated, raw)
        added, removed = _count_changes(diff)
        plural = "" if replaced == 1 else "s"
        summary = f"Edited {raw}: replaced {replaced} occurrence{plural} (+{added} -{removed} lines)"
        shown = cap_middle(strip_ansi(diff), max(max_chars - len(summary) - 1, 200))
        return ToolResult(
            content=f"{summary}\n{shown}",
            diff=cap_middle(diff, max_chars),
            written_paths=[path],
            meta={"replacements": replaced, "added": added, "removed": removed},
        ), sha256_bytes(data_new)
