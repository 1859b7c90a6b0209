"""A container lane's worktree on this machine kept in step with its container (backends/mirror.py),
against the real Docker Engine: the lane's changes come here, this machine's commits go there, both
changed keeps both, and the new backend methods (tree listing, files by tar, adopt) work."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from paragents.backend_settings import ContainerSettings
from paragents.backends import BackendError, LaneSpec
from paragents.backends.base import FileProblem
from paragents.backends.container import ContainerBackend
from paragents.backends.mirror import Mirror
from tests.backends.engine import Engine, git


@pytest.fixture
async def lane(
    docker_engine: Engine, lane_repo: Path, tmp_path: Path
) -> AsyncIterator[tuple[ContainerBackend, Mirror]]:
    worktree = tmp_path / "lanes" / "m1"
    git(lane_repo, "worktree", "add", "-q", "-b", "paragents/m1", str(worktree))
    spec = LaneSpec(lane_repo, "m1", git(lane_repo, "rev-parse", "HEAD"), worktree=worktree)
    backend = ContainerBackend(spec, ContainerSettings(host=docker_engine.host), docker_engine.image)
    await backend.create()
    try:
        yield backend, Mirror(backend, worktree)
    finally:
        await backend._remove()
        await backend.close()


def status(worktree: Path) -> list[str]:
    out = subprocess.run(["git", "status", "--porcelain"], cwd=worktree, capture_output=True, text=True)
    return sorted(out.stdout.splitlines())


async def test_the_lanes_changes_come_to_its_worktree(lane: tuple[ContainerBackend, Mirror]) -> None:
    backend, mirror = lane
    wt = mirror.worktree
    await backend.write_file("app.py", b"def add(a, b):\n    return a + b\n")
    await backend.write_file("new.txt", b"untracked\n")
    assert (await backend.exec("git rm -q README.md")).ok
    done = await mirror.sync()
    assert done.pulled and not done.pushed
    assert "a + b" in (wt / "app.py").read_text() and (wt / "new.txt").read_text() == "untracked\n"
    assert not (wt / "README.md").exists()
    assert status(wt) == [" D README.md", " M app.py", "?? new.txt"]
    # the lane deletes the untracked file it made: it goes here too (the private index knew it)
    assert (await backend.exec("rm new.txt && git commit -qam 'fix add'")).ok
    await mirror.sync()
    assert not (wt / "new.txt").exists() and status(wt) == []
    assert git(wt, "log", "-1", "--format=%s") == "fix add"
    assert not (await mirror.sync()).pulled  # nothing changed on either side


async def test_commits_made_here_go_to_the_lane(lane: tuple[ContainerBackend, Mirror]) -> None:
    backend, mirror = lane
    wt = mirror.worktree
    await backend.write_file("work.txt", b"the candidate's work\n")
    await mirror.sync()
    git(wt, "add", "-A")
    git(wt, "commit", "-q", "-m", "committed on this machine")
    host_head = git(wt, "rev-parse", "HEAD")
    done = await mirror.sync()
    assert done.pushed and not done.pulled
    assert (await backend.exec("git rev-parse HEAD")).output.strip() == host_head
    assert (await backend.exec("git status --porcelain")).output.strip() == ""
    again = await mirror.sync()
    assert not again.pulled and not again.pushed and git(wt, "rev-parse", "HEAD") == host_head
    # files changed here (a stash of what verify left) are taken too
    await backend.write_file("leftover.txt", b"x\n")
    await mirror.sync()
    git(wt, "stash", "push", "-u", "-q")
    assert (await mirror.sync()).pushed
    with pytest.raises(FileProblem) as gone:
        await backend.read_file("leftover.txt")
    assert gone.value.reason == "missing"


async def test_both_sides_changed_keeps_both(lane: tuple[ContainerBackend, Mirror], lane_repo: Path) -> None:
    backend, mirror = lane
    wt = mirror.worktree
    await mirror.sync()
    (wt / "here.txt").write_text("edited on this machine\n")
    await backend.write_file("there.txt", b"written in the lane\n")
    done = await mirror.sync()
    assert done.pulled and done.note is not None and "kept" in done.note
    assert (wt / "there.txt").exists() and not (wt / "here.txt").exists()
    kept = git(lane_repo, "rev-parse", mirror.host_ref)
    assert git(lane_repo, "show", f"{kept}:here.txt") == "edited on this machine"


async def test_a_round_sync_never_overwrites_a_file_changed_here(
    lane: tuple[ContainerBackend, Mirror],
) -> None:
    backend, mirror = lane
    wt = mirror.worktree
    await mirror.sync()
    await backend.write_file("app.py", b"lane version\n")
    await backend.write_file("other.txt", b"lane only\n")
    fast = await mirror.sync(fast=True)  # nothing changed here: the two-way merge writes the lane's files
    assert fast.pulled and (wt / "app.py").read_text() == "lane version\n"
    (wt / "README.md").write_text("hand edit here\n")  # untouched by the lane: stays as it is
    await backend.write_file("other.txt", b"lane again\n")
    assert (await mirror.sync(fast=True)).pulled
    assert (wt / "README.md").read_text() == "hand edit here\n" and (
        wt / "other.txt"
    ).read_text() == "lane again\n"
    (wt / "app.py").write_text("hand edit of a file the lane changes\n")
    await backend.write_file("app.py", b"lane changed it too\n")
    both = await mirror.sync(fast=True)  # the merge refuses: the full sync keeps both, the lane wins
    assert both.note is not None and "kept" in both.note
    kept = git(mirror.spec.repo, "rev-parse", mirror.host_ref)
    assert git(mirror.spec.repo, "show", f"{kept}:app.py") == "hand edit of a file the lane changes"
    assert (wt / "app.py").read_text() == "lane changed it too\n"


async def test_adopt_refuses_when_the_lane_changed_meanwhile(lane: tuple[ContainerBackend, Mirror]) -> None:
    backend, mirror = lane
    await mirror.sync()
    (mirror.worktree / "here.txt").write_text("x\n")
    tree = await mirror.host_tree()
    head = git(mirror.worktree, "rev-parse", "HEAD")
    commit = await mirror._commit(tree, head)
    git(mirror.worktree, "update-ref", mirror.host_ref, commit)
    await backend.write_file("there.txt", b"meanwhile\n")
    with pytest.raises(BackendError, match="changed since"):
        await backend.adopt(mirror.host_ref, expect_tree="0" * 40)
    assert (await backend.read_file("there.txt")) == b"meanwhile\n"


async def test_tree_listing_and_files_by_tar(lane: tuple[ContainerBackend, Mirror]) -> None:
    backend, _ = lane
    await backend.write_file("src/pkg/mod.py", b"x = 1\n")
    await backend.write_file("node_modules/dep/index.js", b"skipped\n")
    assert (await backend.exec("ln -s src/pkg link && ln -s /nowhere dangling && mkfifo pipe")).ok
    entries = {e.path: e for e in await backend.list_tree(".")}
    assert {"app.py", "src", "src/pkg", "src/pkg/mod.py", "link", "dangling", "pipe"} <= set(entries)
    assert not any(p.split("/")[0] in ("node_modules", ".git") for p in entries)  # as fsutil.walk
    assert (
        entries["link"].kind == "l"
        and entries["link"].target_kind == "d"
        and entries["link"].link == "src/pkg"
    )
    assert entries["dangling"].target_kind == "N" and entries["pipe"].kind == "o"
    assert entries["src/pkg/mod.py"].size == 6 and entries["src/pkg/mod.py"].mtime > 0
    top = {e.path for e in await backend.list_tree(".", depth=1)}
    assert "src" in top and "src/pkg" not in top
    files = await backend.read_files(
        ".", ["app.py", "src/pkg/mod.py", "link", "pipe", "missing"], limit=10_000
    )
    assert set(files) == {"app.py", "src/pkg/mod.py"} and files["src/pkg/mod.py"] == b"x = 1\n"
    assert set(await backend.read_files(".", ["app.py", "src/pkg/mod.py"], limit=40)) == {"app.py"}
    with pytest.raises(FileProblem) as missing:
        await backend.list_tree("nope")
    assert missing.value.reason == "missing"
    with pytest.raises(FileProblem) as directory:
        await backend.read_file("src")
    assert directory.value.reason == "directory"
