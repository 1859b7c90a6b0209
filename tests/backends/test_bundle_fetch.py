"""A snapshot's fetch (paragents/backends/bundle.py) with other lanes fetching into the same repository:
a fetch that failed only on another lane's ref runs again; one that failed on what it brought does
not. Real git; the race itself (rare) is played by answering the first fetch with git's own error."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from paragents.backends import bundle
from paragents.backends.base import BackendError, LaneSpec
from paragents.lanes.git import GitResult
from paragents.lanes.git import git as real_git

SNAP_ENV = {
    "GIT_AUTHOR_NAME": "paragents",
    "GIT_AUTHOR_EMAIL": "paragents@localhost",
    "GIT_COMMITTER_NAME": "paragents",
    "GIT_COMMITTER_EMAIL": "paragents@localhost",
    "GIT_AUTHOR_DATE": "@0 +0000",
    "GIT_COMMITTER_DATE": "@0 +0000",
}


def run(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env={**os.environ, **SNAP_ENV}, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


@pytest.fixture
def lane(tmp_path: Path) -> tuple[LaneSpec, bytes]:
    """The user's repository and a lane's snapshot output (``COMMIT HEAD TREE`` + bundle), as the
    lane's SNAPSHOT script prints it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    run(repo, "init", "-q", "-b", "main")
    (repo / "a.py").write_text("x = 1\n")
    run(repo, "add", "-A")
    run(repo, "commit", "-q", "-m", "init")
    base = run(repo, "rev-parse", "HEAD")
    there = tmp_path / "there"
    run(tmp_path, "clone", "-q", str(repo), str(there))
    (there / "a.py").write_text("x = 2\n")
    run(there, "add", "-A")
    tree = run(there, "write-tree")
    commit = run(there, "commit-tree", tree, "-p", base, "-m", "paragents snapshot")
    assert commit == bundle.snapshot_id(tree, base)
    run(there, "update-ref", "refs/paragents/snapshot", commit)
    run(there, "bundle", "create", "-q", str(tmp_path / "s.bundle"), "refs/paragents/snapshot", f"^{base}")
    out = f"{commit} {base} {tree}\n".encode() + (tmp_path / "s.bundle").read_bytes()
    return LaneSpec(repo=repo, name="l1", base_commit=base), out


def first_fetch_fails(monkeypatch: pytest.MonkeyPatch, err: str) -> list[int]:
    """Answer the first ``git fetch`` with ``err`` (exit 128); count the fetches."""
    real = real_git  # what bundle.py imported
    fetches: list[int] = []

    async def git(*args: Any, **kwargs: Any) -> GitResult:
        if "fetch" in args:
            fetches.append(1)
            if len(fetches) == 1:
                return GitResult(128, "", err)
        return await real(*args, **kwargs)

    monkeypatch.setattr(bundle, "git", git)
    return fetches


async def test_a_fetch_that_met_another_lanes_new_ref_runs_again(
    lane: tuple[LaneSpec, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, out = lane
    fetches = first_fetch_fails(
        monkeypatch,
        "fatal: bad object refs/paragents/remote/l2/incoming\n"
        "error: /tmp/x/snapshot.bundle did not send all necessary objects",
    )
    snap = await bundle.fetch_snapshot(spec, out, max_bytes=1 << 20, known=[spec.base_commit])
    assert len(fetches) == 2
    assert snap.changed and run(spec.repo, "rev-parse", spec.snapshot_ref) == snap.commit


async def test_a_fetch_refused_for_what_it_brought_is_not_run_again(
    lane: tuple[LaneSpec, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, out = lane
    fetches = first_fetch_fails(
        monkeypatch,
        f"fatal: bad object refs/paragents/remote/{spec.name}/incoming\n"
        "error: /tmp/x/snapshot.bundle did not send all necessary objects",
    )
    with pytest.raises(BackendError, match="refused by git"):
        await bundle.fetch_snapshot(spec, out, max_bytes=1 << 20, known=[spec.base_commit])
    assert len(fetches) == 1
    assert not run(spec.repo, "for-each-ref", "refs/paragents/")
