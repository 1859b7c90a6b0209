"""The tools through an execution facet (tools/remote.py) give what they give here: the same text for
the same files, with the lane's files elsewhere. The "elsewhere" here is a second folder served by the
local backend (fast, no engine); tests/backends/test_remote_sessions.py does it in real containers."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from paragents.backends.base import LaneSpec
from paragents.backends.facet import LaneExecution
from paragents.backends.lane import RemoteLane
from paragents.backends.local import LocalBackend
from paragents.tools.base import ToolContext
from paragents.tools.registry import default_registry


@pytest.fixture
async def pair(tmp_path: Path) -> AsyncIterator[tuple[Path, Path, LaneExecution]]:
    """(the lane's files, the empty folder standing for them here, the facet)."""
    lane = tmp_path / "lane"
    here = tmp_path / "here"
    here.mkdir()
    (lane / "src" / "pkg").mkdir(parents=True)
    (lane / ".git").mkdir()  # LocalBackend wants a worktree; tools skip .git
    (lane / "src" / "app.py").write_text("".join(f"line {i}\n" for i in range(1, 30)) + "def add(a, b):\n")
    (lane / "src" / "pkg" / "mod.py").write_text("x = 1\nADD = 'add'\n")
    (lane / "notes.txt").write_text("add more\n")
    (lane / "blob.bin").write_bytes(b"\x00\x01" * 100)
    os.symlink("src", lane / "link")
    backend = LocalBackend(LaneSpec(tmp_path, "t", "0" * 40, worktree=lane))
    facet = LaneExecution(RemoteLane(backend, here), here)
    yield lane, here, facet
    await backend.close()


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("read_file", {"path": "src/app.py"}),
    ("read_file", {"path": "src/app.py", "offset": 28, "limit": 5}),
    ("read_file", {"path": "src"}),
    ("read_file", {"path": "blob.bin"}),
    ("read_file", {"path": "src/app.py", "offset": 90}),
    ("list_dir", {"path": "."}),
    ("list_dir", {"path": "src"}),
    ("list_dir", {"path": "notes.txt"}),
    ("glob", {"pattern": "**/*.py"}),
    ("glob", {"pattern": "*"}),
    ("glob", {"pattern": "*.py", "path": "src"}),
    ("glob", {"pattern": "/etc/*"}),
    ("grep", {"pattern": "add", "ignore_case": True}),
    ("grep", {"pattern": "add", "glob": "*.py"}),
    ("grep", {"pattern": "x =", "path": "src/pkg/mod.py"}),
    ("grep", {"pattern": "(", "path": "."}),
    ("grep", {"pattern": "nothing-matches"}),
    ("run_command", {"command": "ls; echo err >&2; exit 3"}),
    ("run_command", {"command": "pwd | sed 's|.*/||'", "cwd": "src"}),
    ("run_command", {"command": "true", "cwd": "../elsewhere"}),
]


def _ctx(workdir: Path, execution: LaneExecution | None = None) -> ToolContext:
    return ToolContext(workdir=workdir, execution=execution)


async def _run(name: str, args: dict[str, Any], ctx: ToolContext) -> Any:
    tool = default_registry().get(name)
    assert tool is not None
    return await tool.run(tool.validate(args), ctx)


@pytest.mark.parametrize(("name", "args"), CALLS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CALLS)])
async def test_same_text_as_here(
    pair: tuple[Path, Path, LaneExecution], name: str, args: dict[str, Any]
) -> None:
    lane, here, facet = pair
    local = await _run(name, args, _ctx(lane))
    remote = await _run(name, args, _ctx(here, facet))
    assert remote.is_error == local.is_error
    text = remote.content.replace(str(here), str(lane))
    if name == "run_command":
        text = text.replace(f"\n[ran in {facet.where}]", "")
    assert text == local.content
    assert not any(here.iterdir())  # nothing of the lane was written here


async def test_edits_happen_in_the_lane_and_report_local_paths(
    pair: tuple[Path, Path, LaneExecution],
) -> None:
    lane, here, facet = pair
    reads: list[tuple[Path, str]] = []
    writes: list[tuple[Path, str]] = []
    ctx = ToolContext(workdir=here, execution=facet, on_read=lambda p, d: reads.append((p, d)),
                      on_write=lambda p, d: writes.append((p, d)))  # fmt: skip
    made = await _run("write_file", {"path": "new/file.txt", "content": "hello\n"}, ctx)
    assert not made.is_error and made.content.startswith("Created new/file.txt")
    assert (lane / "new" / "file.txt").read_text() == "hello\n" and not (here / "new").exists()
    change = {"path": "src/pkg/mod.py", "old_string": "x = 1", "new_string": "x = 2"}
    edited = await _run("edit_file", change, ctx)
    assert not edited.is_error and "-x = 1" in (edited.diff or "")
    assert (lane / "src" / "pkg" / "mod.py").read_text().startswith("x = 2")
    await _run("read_file", {"path": "src/pkg/mod.py"}, ctx)
    assert [p for p, _ in writes] == [here / "new" / "file.txt", here / "src" / "pkg" / "mod.py"]
    assert reads[0] == writes[1]  # same file, same digest: the stale-read check sees no change
    missing = await _run("edit_file", {"path": "nope.py", "old_string": "a", "new_string": "b"}, ctx)
    assert missing.is_error and "file not found: nope.py" in missing.content
    folder = await _run("write_file", {"path": "src", "content": "x"}, ctx)
    assert folder.is_error and "is a directory" in folder.content


@pytest.mark.parametrize("path", ["/etc/passwd", "../../outside.txt", "~/.ssh/id_rsa", "src/../../x"])
async def test_paths_outside_the_lane_are_refused(pair: tuple[Path, Path, LaneExecution], path: str) -> None:
    _, here, facet = pair
    for name, args in (
        ("read_file", {"path": path}),
        ("write_file", {"path": path, "content": "x"}),
        ("list_dir", {"path": path}),
        ("grep", {"pattern": "root", "path": path}),
    ):
        result = await _run(name, args, _ctx(here, facet))
        assert result.is_error and "outside the lane" in result.content, (name, result.content)


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("list_dir", {"path": "."}),
        ("glob", {"pattern": "**/*"}),
        ("grep", {"pattern": "add"}),
        ("grep", {"pattern": "add", "path": "notes.txt"}),
    ],
)
async def test_what_read_rules_withhold_is_withheld_the_same_and_never_fetched(
    pair: tuple[Path, Path, LaneExecution], name: str, args: dict[str, Any]
) -> None:
    lane, here, facet = pair

    def hidden(root: Path, path: Path, base: Path) -> str | None:
        return "by Read deny rules" if path == base / "notes.txt" else None

    fetched: list[str] = []
    real = facet.contents

    async def contents(path: str, names: list[str], *, limit: int) -> dict[str, bytes]:
        fetched.extend(names)
        return await real(path, names, limit=limit)

    facet.contents = contents  # type: ignore[method-assign]
    local = await _run(name, args, ToolContext(workdir=lane, read_check=lambda r, p: hidden(r, p, lane)))
    remote = await _run(
        name, args, ToolContext(workdir=here, execution=facet, read_check=lambda r, p: hidden(r, p, here))
    )
    assert "withheld by Read deny rules" in local.content
    assert remote.content.replace(str(here), str(lane)) == local.content
    assert "notes.txt" not in fetched
