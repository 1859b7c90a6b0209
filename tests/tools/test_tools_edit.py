"""write_file and edit_file: atomic writes, modes, diffs, line endings and clear failures."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from paragents.tools import ToolContext, ToolResult
from paragents.tools import edit as edit_mod

Call = Callable[..., Awaitable[ToolResult]]


def current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


# ---------------------------------------------------------------- write_file


async def test_write_file_creates_parents_and_reports_created(ctx: ToolContext, call: Call) -> None:
    result = await call("write_file", {"path": "a/b/new.txt", "content": "one\ntwo\n"})
    target = ctx.workdir / "a" / "b" / "new.txt"
    assert not result.is_error
    assert target.read_bytes() == b"one\ntwo\n"
    assert result.content == "Created a/b/new.txt (2 lines, 8 bytes)"
    assert result.written_paths == [target.resolve()]
    assert result.diff is not None
    assert result.diff.splitlines()[:2] == ["--- /dev/null", "+++ b/a/b/new.txt"]
    assert "+one" in result.diff and "+two" in result.diff
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~current_umask()


async def test_write_file_overwrite_gives_unified_diff(ctx: ToolContext, call: Call) -> None:
    target = ctx.workdir / "f.txt"
    target.write_text("keep\nold\n")
    result = await call("write_file", {"path": "f.txt", "content": "keep\nnew\n"})
    assert target.read_text() == "keep\nnew\n"
    assert result.content.startswith("Updated f.txt (+1 -1 lines")
    assert result.diff == "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n keep\n-old\n+new\n"
    same = await call("write_file", {"path": "f.txt", "content": "keep\nnew\n"})
    assert not same.is_error and same.content.startswith("No change")


async def test_write_file_is_atomic_replace_and_keeps_mode(ctx: ToolContext, call: Call) -> None:
    target = ctx.workdir / "run.sh"
    target.write_text("echo old\n")
    target.chmod(0o750)
    inode_before = target.stat().st_ino
    await call("write_file", {"path": "run.sh", "content": "echo new\n"})
    assert target.read_text() == "echo new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    assert target.stat().st_ino != inode_before  # replaced by rename, not rewritten in place
    assert leftovers(ctx.workdir) == []


async def test_write_file_failure_leaves_old_content_and_no_temp(
    ctx: ToolContext, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = ctx.workdir / "keep.txt"
    target.write_text("original\n")

    def broken_replace(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)  # the os module edit.py writes through
    result = await call("write_file", {"path": "keep.txt", "content": "new\n"})
    assert result.is_error and "cannot write keep.txt: No space left on device" in result.content
    assert target.read_text() == "original\n"
    assert leftovers(ctx.workdir) == []


async def test_write_file_through_symlink_writes_target(ctx: ToolContext, call: Call) -> None:
    real = ctx.workdir / "real.txt"
    real.write_text("a\n")
    (ctx.workdir / "link.txt").symlink_to("real.txt")
    await call("write_file", {"path": "link.txt", "content": "b\n"})
    assert (ctx.workdir / "link.txt").is_symlink()
    assert real.read_text() == "b\n"


async def test_write_file_to_directory_fails(ctx: ToolContext, call: Call) -> None:
    (ctx.workdir / "d").mkdir()
    result = await call("write_file", {"path": "d", "content": "x"})
    assert result.is_error and "is a directory" in result.content


async def test_write_file_calls_on_write_with_sha256(tmp_path: Path, call: Call) -> None:
    seen: list[tuple[Path, str]] = []
    context = ToolContext(workdir=tmp_path, on_write=lambda p, h: seen.append((p, h)))
    await call("write_file", {"path": "x.txt", "content": "héllo\n"}, context)
    assert seen == [((tmp_path / "x.txt").resolve(), hashlib.sha256("héllo\n".encode()).hexdigest())]


async def test_write_file_diff_marks_missing_final_newline(ctx: ToolContext, call: Call) -> None:
    (ctx.workdir / "n.txt").write_text("a\nb")
    result = await call("write_file", {"path": "n.txt", "content": "a\nc"})
    assert result.diff is not None
    assert "-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n" in result.diff


# ---------------------------------------------------------------- edit_file


async def test_edit_file_replaces_once_and_returns_diff(ctx: ToolContext, call: Call) -> None:
    target = ctx.workdir / "app.py"
    target.write_text("def f():\n    return 1\n\nprint(f())\n")
    result = await call("edit_file", {"path": "app.py", "old_string": "return 1", "new_string": "return 2"})
    assert not result.is_error
    assert target.read_text() == "def f():\n    return 2\n\nprint(f())\n"
    assert result.content.startswith("Edited app.py: replaced 1 occurrence (+1 -1 lines)")
    assert "-    return 1\n+    return 2" in result.content
    assert result.diff is not None and result.diff.startswith("--- a/app.py\n+++ b/app.py\n")
    assert result.written_paths == [target.resolve()]


async def test_edit_file_old_string_missing(ctx: ToolContext, call: Call) -> None:
    (ctx.workdir / "a.txt").write_text("alpha\n")
    result = await call("edit_file", {"path": "a.txt", "old_string": "beta", "new_string": "x"})
    assert result.is_error
    assert "old_string not found in a.txt; read the file again" in result.content
    assert (ctx.workdir / "a.txt").read_text() == "alpha\n"


async def test_edit_file_not_unique_then_replace_all(ctx: ToolContext, call: Call) -> None:
    target = ctx.workdir / "a.txt"
    target.write_text("x = 1\nx = 1\nx = 1\n")
    result = await call("edit_file", {"path": "a.txt", "old_string": "x = 1", "new_string": "x = 2"})
    assert result.is_error
    assert "old_string occurs 3 times" in result.content and "replace_all" in result.content
    assert target.read_text() == "x = 1\nx = 1\nx = 1\n"
    all_of_them = await call(
        "edit_file", {"path": "a.txt", "old_string": "x = 1", "new_string": "x = 2", "replace_all": True}
    )
    assert not all_of_them.is_error and "replaced 3 occurrences" in all_of_them.content
    assert target.read_text() == "x = 2\nx = 2\nx = 2\n"


async def test_edit_file_identical_strings_and_missing_file(ctx: ToolContext, call: Call) -> None:
    (ctx.workdir / "a.txt").write_text("same\n")
    same = await call("edit_file", {"path": "a.txt", "old_string": "same", "new_string": "same"})
    assert same.is_error and "identical" in same.content
    missing = await call("edit_file", {"path": "nope.txt", "old_string": "a", "new_string": "b"})
    assert missing.is_error and "not found: nope.txt" in missing.content and "write_file" in missing.content


async def test_edit_file_refuses_binary_and_non_utf8(ctx: ToolContext, call: Call) -> None:
    (ctx.workdir / "b.bin").write_bytes(b"ab\x00cd")
    binary = await call("edit_file", {"path": "b.bin", "old_string": "ab", "new_string": "x"})
    assert binary.is_error and "binary" in binary.content
    (ctx.workdir / "latin.txt").write_bytes("café\n".encode("latin-1"))
    latin = await call("edit_file", {"path": "latin.txt", "old_string": "caf", "new_string": "x"})
    assert latin.is_error and "not valid UTF-8" in latin.content
    assert (ctx.workdir / "latin.txt").read_bytes() == "café\n".encode("latin-1")


async def test_edit_file_preserves_crlf_bom_and_mode(ctx: ToolContext, call: Call) -> None:
    target = ctx.workdir / "win.txt"
    target.write_bytes("\ufeffone\r\ntwo\r\nthree\r\n".encode())
    target.chmod(0o640)
    result = await call("edit_file", {"path": "win.txt", "old_string": "one\ntwo", "new_string": "uno\ndos"})
    assert not result.is_error, result.content
    assert target.read_bytes() == "\ufeffuno\r\ndos\r\nthree\r\n".encode()
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


async def test_edit_file_calls_on_write_with_new_sha256(tmp_path: Path, call: Call) -> None:
    seen: list[tuple[Path, str]] = []
    (tmp_path / "e.txt").write_text("a b c\n")
    context = ToolContext(workdir=tmp_path, on_write=lambda p, h: seen.append((p, h)))
    await call("edit_file", {"path": "e.txt", "old_string": "b", "new_string": "ß"}, context)
    assert seen == [((tmp_path / "e.txt").resolve(), hashlib.sha256("a ß c\n".encode()).hexdigest())]
    await call("edit_file", {"path": "e.txt", "old_string": "zzz", "new_string": "y"}, context)
    assert len(seen) == 1


# ---------------------------------------------------------------- previews (permission asks)


def test_previews_show_the_change_and_write_nothing(ctx: ToolContext) -> None:
    work = ctx.workdir
    (work / "app.py").write_text("def f():\n    return 1\n")
    edit = edit_mod.EditFile().preview({"path": "app.py", "old_string": "1", "new_string": "2"}, work)
    assert edit.kind == "diff" and "-    return 1\n+    return 2" in edit.text and "+1 -1" in edit.detail
    missing = edit_mod.EditFile().preview({"path": "app.py", "old_string": "x", "new_string": "y"}, work)
    assert missing.kind == "note" and "not found" in missing.problem
    big = "".join(f"line {i}\n" for i in range(1000))
    new = edit_mod.WriteFile().preview({"path": "new.txt", "content": big}, work)
    assert new.kind == "content" and new.text.startswith("line 0\nline 1\n")
    assert "1000 lines" in new.detail and new.omitted == 1000 - len(new.text.splitlines())
    over = edit_mod.WriteFile().preview({"path": "app.py", "content": "x\n"}, work)
    assert over.kind == "diff" and "-def f():" in over.text and "+x" in over.text
    assert (work / "app.py").read_text() == "def f():\n    return 1\n" and not (work / "new.txt").exists()
