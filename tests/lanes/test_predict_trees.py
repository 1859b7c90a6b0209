"""Prediction rounds that take a lane's tree as given (a remote lane's fetched snapshot:
``Predictor.round(trees=...)``), and rounds not scheduled by tool calls that change nothing."""

from __future__ import annotations

import os
import subprocess
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest

from paragents import events as ev
from paragents.lanes import create_lane
from paragents.lanes.predict import Predictor
from paragents.llm.replay import ReplayServer
from paragents.models import ToolCall
from paragents.sessions.lanes import local_only
from paragents.sessions.runtime import Runtime
from paragents.store import LaneRecord, Store
from tests.lanes.conftest import commit_all

TEXT = "".join(f"line {i}\n" for i in range(1, 21))


@pytest.fixture
def base_repo(repo: Path) -> Path:
    (repo / "notes.txt").write_text(TEXT)
    commit_all(repo, "notes")
    return repo


def _git(repo: Path, *args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> str:
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, input=stdin, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def tree_with(repo: Path, base: str, path: str, text: str, tmp: Path) -> str:
    """A tree object: ``base``'s tree with ``path`` holding ``text`` (what a remote lane fetched)."""
    env = {**os.environ, "GIT_INDEX_FILE": str(tmp / "tree-index")}
    _git(repo, "read-tree", base, env=env)
    blob = _git(repo, "hash-object", "-w", "--stdin", stdin=text)
    _git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
    return _git(repo, "write-tree", env=env)


async def _two(store: Store, repo: Path) -> tuple[LaneRecord, LaneRecord]:
    a = (await create_lane(store, repo, "a", setup=False)).lane
    b = (await create_lane(store, repo, "b", setup=False)).lane
    return a, b


async def test_a_given_tree_is_predicted_without_reading_the_worktree(
    store: Store, base_repo: Path, tmp_path: Path
) -> None:
    a, b = await _two(store, base_repo)
    predictor = Predictor(base_repo)
    assert await predictor.round([a, b]) == []
    # b's worktree here is untouched; its fetched tree changes line 5, as a's worktree does
    (Path(a.path) / "notes.txt").write_text(TEXT.replace("line 5\n", "line five (a)\n"))
    theirs = tree_with(
        base_repo, b.base_commit, "notes.txt", TEXT.replace("line 5\n", "line 5 by b\n"), tmp_path
    )
    conflicts = await predictor.round([a, b], trees={"b": theirs})
    assert [(c.a, c.b, c.files) for c in conflicts] == [("a", "b", ("notes.txt",))]
    # the same tree again: nothing of b is read or diffed (one git call at most: the base tip)
    calls = predictor.git_calls
    snap, touched = await predictor.take(b, theirs)
    assert snap.tree == theirs and touched == frozenset() and predictor.git_calls == calls
    # b's tree goes back to the base: the conflict is gone, though b's worktree never changed
    base_tree = _git(base_repo, "rev-parse", f"{b.base_commit}^{{tree}}")
    assert await predictor.round([a, b], trees={"b": base_tree}) == []
    predictor.close()


async def test_remote_lanes_are_not_read_from_their_worktree(store: Store, base_repo: Path) -> None:
    a, b = await _two(store, base_repo)
    remote = [a, replace(b, backend="container")]
    assert local_only(remote, None) == frozenset({"a"})
    assert local_only(remote, frozenset({"a", "b"})) == frozenset({"a"})
    assert local_only([a, b], None) is None  # no remote lane: as before
    predictor = Predictor(base_repo)
    assert await predictor.round(remote, local_only(remote, None), {}) == []
    # a hand edit in the remote lane's worktree here is not what the lane holds: not predicted
    (Path(b.path) / "notes.txt").write_text(TEXT.replace("line 5\n", "line 5 by hand\n"))
    (Path(a.path) / "notes.txt").write_text(TEXT.replace("line 5\n", "line five (a)\n"))
    assert await predictor.round(remote, local_only(remote, None), {}) == []
    predictor.close()


@pytest.fixture
async def server() -> AsyncIterator[ReplayServer]:
    async with ReplayServer(models=["m"]) as replay:
        yield replay


@pytest.mark.parametrize("name", ["read_file", "list_dir", "glob", "grep"])
async def test_a_read_only_call_schedules_no_round(
    server: ReplayServer, base_repo: Path, tmp_path: Path, name: str
) -> None:
    cfg = {"base_url": server.base_url, "model": "m", "max_retries": 0}
    rt = await Runtime.create(base_repo, cli_overrides=cfg, db_path=tmp_path / "db.sqlite")
    try:
        view = await rt.lifecycle.new_session("api", lane=True)
        watcher = rt.lane_watcher
        assert watcher is not None
        watcher.observe(ev.ToolCallFinished(view.id, ToolCall("c1", name, "{}"), "ok", "text"))
        watcher.observe(ev.ToolCallFinished(view.id, ToolCall("c2", "write_file", "{}"), "denied", "no"))
        assert watcher._pending is None and not watcher._wrote
        watcher.observe(ev.ToolCallFinished(view.id, ToolCall("c3", "run_command", "{}"), "ok", "done"))
        assert watcher._wrote == {view.lane} and watcher._pending is not None
    finally:
        await rt.shutdown()
