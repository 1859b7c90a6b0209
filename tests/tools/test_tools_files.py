"""read_file, list_dir, glob and grep against real files under tmp_path."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from paragents.tools import ToolContext, ToolResult
from paragents.tools import files as files_mod

Call = Callable[..., Awaitable[ToolResult]]


def write(root: Path, rel: str, data: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


# ---------------------------------------------------------------- read_file


async def test_read_file_numbers_lines_like_cat_n(ctx: ToolContext, call: Call) -> None:
    write(ctx.workdir, "src/app.py", "import os\n\nprint(os.name)\n")
    result = await call("read_file", {"path": "src/app.py"})
    assert not result.is_error
    assert result.content == "     1\timport os\n     2\t\n     3\tprint(os.name)"
    assert result.meta["lines"] == 3


async def test_read_file_offset_and_limit_with_truncation_note(ctx: ToolContext, call: Call) -> None:
    write(ctx.workdir, "ten.txt", "".join(f"line {i}\n" for i in range(1, 11)))
    result = await call("read_file", {"path": "ten.txt", "offset": 3, "limit": 2})
    assert result.content.splitlines() == [
        "     3\tline 3",
        "     4\tline 4",
        "[truncated: showing lines 3-4 of 10; use offset/limit]",
    ]
    tail = await call("read_file", {"path": "ten.txt", "offset": 9})
    assert tail.content.splitlines() == ["     9\tline 9", "    10\tline 10"]


async def test_read_file_output_capped_at_max_output_chars(ctx: ToolContext, call: Call) -> None:
    write(ctx.workdir, "big.txt", "".join(f"{i:05d} " + "x" * 40 + "\n" for i in range(1, 501)))
    small = ToolContext(workdir=ctx.workdir, max_output_chars=1000)
    result = await call("read_file", {"path": "big.txt"}, small)
    assert len(result.content) <= 1000
    shown = result.meta["shown"]
    assert shown[0] == 1 and 1 < shown[1] < 500
    assert result.content.endswith(f"[truncated: showing lines 1-{shown[1]} of 500; use offset/limit]")
    assert f"\t{shown[1]:05d} " in result.content


async def test_read_file_reads_at_most_256_kb_per_call(ctx: ToolContext, call: Call) -> None:
    line = "y" * 99 + "\n"
    write(ctx.workdir, "huge.txt", line * 4000)  # 400 KB
    roomy = ToolContext(workdir=ctx.workdir, max_output_chars=10_000_000)
    result = await call("read_file", {"path": "huge.txt", "limit": 10_000}, roomy)
    last = result.meta["shown"][1]
    assert last * len(line) <= files_mod.MAX_READ_BYTES
    assert last < 4000
    assert result.content.endswith("of 4000; use offset/limit]")


async def test_read_file_missing_directory_binary_and_offset_errors(ctx: ToolContext, call: Call) -> None:
    missing = await call("read_file", {"path": "nope.txt"})
    assert missing.is_error and "not found: nope.txt" in missing.content
    (ctx.workdir / "d").mkdir()
    directory = await call("read_file", {"path": "d"})
    assert directory.is_error and "list_dir" in directory.content
    write(ctx.workdir, "img.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    binary = await call("read_file", {"path": "img.png"})
    assert binary.is_error and "binary" in binary.content
    write(ctx.workdir, "two.txt", "a\nb\n")
    past = await call("read_file", {"path": "two.txt", "offset": 5})
    assert past.is_error and "has 2 lines" in past.content


async def test_read_file_empty_file_and_missing_final_newline(ctx: ToolContext, call: Call) -> None:
    write(ctx.workdir, "empty.txt", "")
    empty = await call("read_file", {"path": "empty.txt"})
    assert not empty.is_error and "0 lines" in empty.content
    write(ctx.workdir, "nonl.txt", "a\nb")
    nonl = await call("read_file", {"path": "nonl.txt"})
    assert nonl.content.splitlines() == ["     1\ta", "     2\tb", "[no newline at end of file]"]


async def test_read_file_expands_home_and_allows_absolute_paths(ctx: ToolContext, call: Call) -> None:
    home = Path(os.environ["HOME"])
    write(home, "notes.txt", "in home\n")
    via_tilde = await call("read_file", {"path": "~/notes.txt"})
    assert via_tilde.content == "     1\tin home"
    via_abs = await call("read_file", {"path": str(home / "notes.txt")})
    assert via_abs.content == "     1\tin home"


async def test_read_file_strips_ansi_and_decodes_bad_utf8(ctx: ToolContext, call: Call) -> None:
    write(ctx.workdir, "log.txt", b"\x1b[32mok\x1b[0m caf\xc3\xa9 bad\xff\n")
    result = await call("read_file", {"path": "log.txt"})
    assert result.content == "     1\tok café bad\ufffd"


async def test_read_file_calls_on_read_with_resolved_path_and_sha256(tmp_path: Path, call: Call) -> None:
    seen: list[tuple[Path, str]] = []
    work = tmp_path / "w2"
    data = b"alpha\nbeta\n" * 50
    write(work, "real/f.txt", data)
    (work / "link.txt").symlink_to(work / "real" / "f.txt")
    context = ToolContext(workdir=work, on_read=lambda p, h: seen.append((p, h)))
    await call("read_file", {"path": "link.txt", "limit": 1}, context)
    assert seen == [((work / "real" / "f.txt").resolve(), hashlib.sha256(data).hexdigest())]
    await call("read_file", {"path": "missing.txt"}, context)
    assert len(seen) == 1


# ---------------------------------------------------------------- list_dir


async def test_list_dir_sorted_with_dir_slash_and_symlink_target(ctx: ToolContext, call: Call) -> None:
    write(ctx.workdir, "b.txt", "")
    write(ctx.workdir, "a/inner.txt", "")
    write(ctx.workdir, ".hidden", "")
    (ctx.workdir / "c").symlink_to("b.txt")
    result = await call("list_dir", {})
    assert result.content.splitlines() == [".hidden", "a/", "b.txt", "c -> b.txt"]
    sub = await call("list_dir", {"path": "a"})
    assert sub.content == "inner.txt"


async def test_list_dir_caps_entries_with_note(
    ctx: ToolContext, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files_mod, "MAX_LIST_ENTRIES", 5)
    for i in range(12):
        write(ctx.workdir, f"f{i:02d}", "")
    result = await call("list_dir", {})
    lines = result.content.splitlines()
    assert lines[:5] == ["f00", "f01", "f02", "f03", "f04"]
    assert lines[5] == "[truncated: showing 5 of 12 entries; use glob to narrow]"


async def test_list_dir_errors_and_empty(ctx: ToolContext, call: Call) -> None:
    missing = await call("list_dir", {"path": "nope"})
    assert missing.is_error and "not found: nope" in missing.content
    write(ctx.workdir, "file.txt", "x")
    not_dir = await call("list_dir", {"path": "file.txt"})
    assert not_dir.is_error and "not a directory" in not_dir.content
    (ctx.workdir / "empty").mkdir()
    empty = await call("list_dir", {"path": "empty"})
    assert not empty.is_error and "empty directory" in empty.content


# ---------------------------------------------------------------- glob


def make_tree(root: Path) -> None:
    for rel in [
        "top.py",
        "src/app.py",
        "src/pkg/mod.py",
        "src/readme.md",
        "node_modules/x/index.py",
        ".git/hooks/pre.py",
        ".venv/lib/site.py",
        "docs/a.js",
        "docs/b.ts",
    ]:
        write(root, rel, f"# {rel}\n")


async def test_glob_globstar_skips_vcs_and_dependency_dirs(ctx: ToolContext, call: Call) -> None:
    make_tree(ctx.workdir)
    result = await call("glob", {"pattern": "**/*.py"})
    assert sorted(result.content.splitlines()) == ["src/app.py", "src/pkg/mod.py", "top.py"]
    top = await call("glob", {"pattern": "*.py"})
    assert top.content == "top.py"
    braces = await call("glob", {"pattern": "docs/*.{js,ts}"})
    assert sorted(braces.content.splitlines()) == ["docs/a.js", "docs/b.ts"]


async def test_glob_sorted_newest_first_and_relative_to_path(ctx: ToolContext, call: Call) -> None:
    make_tree(ctx.workdir)
    for i, rel in enumerate(["src/pkg/mod.py", "src/app.py"]):
        os.utime(ctx.workdir / rel, (1_000_000 + i, 1_000_000 + i))
    result = await call("glob", {"pattern": "**/*.py", "path": "src"})
    assert result.content.splitlines() == ["[paths relative to src]", "app.py", "pkg/mod.py"]
    dirs = await call("glob", {"pattern": "*", "path": "src"})
    assert "pkg/" in dirs.content.splitlines()


async def test_glob_cap_no_match_and_errors(
    ctx: ToolContext, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files_mod, "MAX_GLOB_RESULTS", 3)
    for i in range(7):
        write(ctx.workdir, f"f{i}.txt", "")
    capped = await call("glob", {"pattern": "*.txt"})
    assert len(capped.content.splitlines()) == 4
    assert capped.content.endswith("[truncated: showing 3 of 7 matches; narrow the pattern]")
    none = await call("glob", {"pattern": "*.rs"})
    assert not none.is_error and "No paths match '*.rs'" in none.content
    absolute = await call("glob", {"pattern": "/etc/*"})
    assert absolute.is_error and "relative" in absolute.content
    missing = await call("glob", {"pattern": "*", "path": "nope"})
    assert missing.is_error and "not found" in missing.content


# ---------------------------------------------------------------- grep


async def test_grep_reports_file_line_text_and_skips_binary_and_ignored(ctx: ToolContext, call: Call) -> None:
    write(ctx.workdir, "a.py", "def main():\n    pass\n")
    write(ctx.workdir, "sub/b.py", "x = 1\ndef main_helper():\n")
    write(ctx.workdir, "blob.bin", b"def main\x00\x01\x02")
    write(ctx.workdir, ".git/config", "def main\n")
    write(ctx.workdir, "node_modules/m.js", "def main\n")
    write(ctx.workdir, ".venv/s.py", "def main\n")
    result = await call("grep", {"pattern": r"def main\w*\("})
    assert result.content.splitlines() == ["a.py:1: def main():", "sub/b.py:2: def main_helper():"]


async def test_grep_glob_ignore_case_and_single_file(ctx: ToolContext, call: Call) -> None:
    write(ctx.workdir, "a.py", "TODO one\n")
    write(ctx.workdir, "deep/b.py", "todo two\n")
    write(ctx.workdir, "c.md", "todo three\n")
    only_py = await call("grep", {"pattern": "todo", "glob": "*.py", "ignore_case": True})
    assert only_py.content.splitlines() == ["a.py:1: TODO one", "deep/b.py:1: todo two"]
    case = await call("grep", {"pattern": "todo", "glob": "*.py"})
    assert case.content.splitlines() == ["deep/b.py:1: todo two"]
    in_dir = await call("grep", {"pattern": "todo", "path": "deep"})
    assert in_dir.content.splitlines() == ["[files relative to deep]", "b.py:1: todo two"]
    one = await call("grep", {"pattern": "three", "path": "c.md"})
    assert one.content == "c.md:1: todo three"


async def test_grep_max_results_note_and_no_match(ctx: ToolContext, call: Call) -> None:
    write(ctx.workdir, "many.txt", "hit\n" * 20)
    limited = await call("grep", {"pattern": "hit", "max_results": 5})
    lines = limited.content.splitlines()
    assert lines[:5] == [f"many.txt:{i}: hit" for i in range(1, 6)]
    assert "max_results=5" in lines[5] and len(lines) == 6
    none = await call("grep", {"pattern": "zzz"})
    assert not none.is_error and "No matches for /zzz/" in none.content


async def test_grep_output_capped(ctx: ToolContext, call: Call) -> None:
    write(ctx.workdir, "wide.txt", ("match " + "w" * 200 + "\n") * 100)
    small = ToolContext(workdir=ctx.workdir, max_output_chars=2000)
    result = await call("grep", {"pattern": "match", "max_results": 1000}, small)
    assert len(result.content) <= 2000
    assert result.content.endswith("[truncated: output too long; narrow the search]")


async def test_grep_bad_regex_and_missing_path(ctx: ToolContext, call: Call) -> None:
    bad = await call("grep", {"pattern": "def (main"})
    assert bad.is_error
    assert "invalid regex 'def (main'" in bad.content and "missing )" in bad.content
    missing = await call("grep", {"pattern": "x", "path": "nope"})
    assert missing.is_error and "not found: nope" in missing.content


async def test_grep_strips_ansi_and_cuts_long_lines(ctx: ToolContext, call: Call) -> None:
    write(ctx.workdir, "c.log", "\x1b[31mERROR\x1b[0m boom " + "z" * 1000 + "\n")
    result = await call("grep", {"pattern": "ERROR"})
    line = result.content
    assert line.startswith("c.log:1: ERROR boom zzz")
    assert "\x1b" not in line
    assert line.endswith(" …")
    assert len(line) == len("c.log:1: ") + files_mod.MAX_GREP_LINE_CHARS + 2


async def test_read_file_cuts_very_long_lines(ctx: ToolContext, call: Call) -> None:
    write(ctx.workdir, "min.js", "q" * 5000 + "\n")
    result = await call("read_file", {"path": "min.js"})
    assert result.content == "     1\t" + "q" * files_mod.MAX_LINE_CHARS + " … [line cut at 2000 chars]"
