"""The local backend: today's lanes (a git worktree, run_command's bubblewrap) behind ExecutionBackend."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from paragents.backends import BackendError, ExecutionBackend, LaneSpec, open_backend
from paragents.backends.local import LocalBackend
from paragents.tools.sandbox import SandboxConfig
from tests.backends.engine import git

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")


@pytest.fixture
async def lane(lane_repo: Path, tmp_path: Path) -> AsyncIterator[LocalBackend]:
    worktree = tmp_path / "lanes" / "l1"
    git(lane_repo, "worktree", "add", "-q", "-b", "paragents/l1", str(worktree))
    spec = LaneSpec(
        repo=lane_repo, name="l1", base_commit=git(lane_repo, "rev-parse", "HEAD"), worktree=worktree,
        env={"PORT": "41000"},
    )  # fmt: skip
    backend = await open_backend("local", spec, sandbox=SandboxConfig(mode="auto"))
    assert isinstance(backend, LocalBackend) and isinstance(backend, ExecutionBackend)
    await backend.create()
    yield backend
    await backend.close()


@needs_bwrap
async def test_commands_run_confined_to_the_worktree(lane: LocalBackend, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    result = await lane.exec(f"echo $PORT; pwd; echo in > inside.txt; echo out > {outside}; echo done")
    assert result.output.splitlines()[:2] == ["41000", str(lane.root)]
    assert (lane.root / "inside.txt").read_text() == "in\n"
    assert not outside.exists()  # bubblewrap: read-only outside the lane's root


async def test_timeout_cancel_and_streaming(lane: LocalBackend) -> None:
    result = await lane.exec("sleep 60; echo never", timeout=0.5)
    assert result.timed_out and "never" not in result.output
    seen = asyncio.Event()
    run = asyncio.create_task(lane.exec("echo up; sleep 60", on_output=lambda c: seen.set(), timeout=60))
    await asyncio.wait_for(seen.wait(), 30)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run


async def test_files_stay_inside_the_lane(lane: LocalBackend, tmp_path: Path) -> None:
    await lane.write_file("a/b.txt", b"hello")
    assert await lane.read_file("a/b.txt") == b"hello"
    assert {e.name for e in await lane.list_dir("a")} == {"b.txt"}
    (lane.root / "escape").symlink_to(tmp_path)
    with pytest.raises(BackendError, match="outside lane"):
        await lane.read_file("escape/x")
    with pytest.raises(BackendError):
        await lane.write_file("../x", b"x")


async def test_snapshot_is_a_commit_on_the_lane_head(lane: LocalBackend, lane_repo: Path) -> None:
    await lane.write_file("new.txt", b"new\n")
    snap = await lane.snapshot()
    assert snap.changed and git(lane_repo, "rev-parse", lane.spec.snapshot_ref) == snap.commit
    assert git(lane_repo, "show", f"{snap.commit}:new.txt") == "new"
    assert git(lane_repo, "rev-parse", f"{snap.commit}^") == snap.head
    assert git(lane_repo, "status", "--porcelain") == ""  # the main checkout is untouched
    assert not (await lane.snapshot()).changed
