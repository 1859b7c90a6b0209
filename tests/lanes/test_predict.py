"""Golden tests of cross-lane conflict prediction with real git (merge-tree on working-tree snapshots)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from paragents.lanes import create_lane
from paragents.lanes.predict import Predictor
from paragents.store import LaneRecord, Store
from tests.lanes.conftest import commit_all, sh

TEXT = "".join(f"line {i}\n" for i in range(1, 21))


@pytest.fixture
def base_repo(repo: Path) -> Path:
    (repo / "notes.txt").write_text(TEXT)
    commit_all(repo, "notes")
    return repo


async def _two(store: Store, repo: Path) -> tuple[LaneRecord, LaneRecord]:
    a = (await create_lane(store, repo, "a", setup=False)).lane
    b = (await create_lane(store, repo, "b", setup=False)).lane
    return a, b


def _edit(lane: LaneRecord, rel: str, old: str, new: str) -> None:
    path = Path(lane.path) / rel
    path.write_text(path.read_text().replace(old, new))


async def test_same_line_edited_in_two_lanes_conflicts(store: Store, base_repo: Path) -> None:
    a, b = await _two(store, base_repo)
    _edit(a, "notes.txt", "line 5\n", "line five (a)\n")
    _edit(b, "notes.txt", "line 5\n", "line 5 by b\n")
    conflicts = await Predictor(base_repo).round([a, b])
    assert [(c.a, c.b, c.files) for c in conflicts] == [("a", "b", ("notes.txt",))]
    assert conflicts[0].describe() == "a conflicts with b in notes.txt"


async def test_add_add_with_different_contents_conflicts(store: Store, base_repo: Path) -> None:
    a, b = await _two(store, base_repo)
    (Path(a.path) / "new.py").write_text("x = 1\n")
    (Path(b.path) / "new.py").write_text("x = 2\n")
    conflicts = await Predictor(base_repo).round([a, b])
    assert [c.files for c in conflicts] == [("new.py",)]


async def test_rename_rename_conflicts_and_rename_vs_disjoint_edit_does_not(
    store: Store, base_repo: Path
) -> None:
    a, b = await _two(store, base_repo)
    sh(Path(a.path), "mv", "notes.txt", "a-notes.txt")
    sh(Path(b.path), "mv", "notes.txt", "b-notes.txt")
    conflicts = await Predictor(base_repo).round([a, b])
    assert len(conflicts) == 1 and "notes.txt" in conflicts[0].files

    c = (await create_lane(store, base_repo, "c", setup=False)).lane
    _edit(c, "notes.txt", "line 20\n", "line twenty\n")
    clean = await Predictor(base_repo).round([a, c])
    assert clean == []  # a's rename carries c's edit along


async def test_untracked_only_file_is_seen(store: Store, base_repo: Path) -> None:
    a, b = await _two(store, base_repo)
    (Path(a.path) / "util.py").write_text("def f():\n    return 'a'\n")  # never added
    (Path(b.path) / "util.py").write_text("def f():\n    return 'b'\n")
    commit_all(Path(b.path), "b adds util")
    index = Path(sh(Path(a.path), "rev-parse", "--path-format=absolute", "--git-path", "index"))
    before = index.read_bytes()
    conflicts = await Predictor(base_repo).round([a, b])
    assert [c.files for c in conflicts] == [("util.py",)]
    assert index.read_bytes() == before  # the lane's own index is untouched
    assert sh(Path(a.path), "status", "--porcelain") == "?? util.py"


async def test_disjoint_edits_give_no_conflict(store: Store, base_repo: Path) -> None:
    a, b = await _two(store, base_repo)
    _edit(a, "notes.txt", "line 1\n", "first line\n")
    _edit(b, "notes.txt", "line 20\n", "last line\n")
    (Path(a.path) / "only_a.py").write_text("a\n")
    _edit(b, "app.py", "return 1", "return 2")
    assert await Predictor(base_repo).round([a, b]) == []


async def test_lane_against_its_base_branch_tip(store: Store, base_repo: Path) -> None:
    a = (await create_lane(store, base_repo, "a", setup=False)).lane
    _edit(a, "app.py", "return 1", "return 'lane'")
    predictor = Predictor(base_repo)
    assert await predictor.round([a]) == []
    (base_repo / "app.py").write_text("def hello():\n    return 'main'\n")
    commit_all(base_repo, "main moves")
    conflicts = await predictor.round([a])
    assert [(c.a, c.b, c.files, c.against_base) for c in conflicts] == [("a", "main", ("app.py",), True)]
    assert conflicts[0].describe() == "a conflicts with its base main in app.py"


async def test_incremental_rounds_recheck_only_what_changed_and_stay_right(
    store: Store, base_repo: Path
) -> None:
    a, b = await _two(store, base_repo)
    _edit(a, "notes.txt", "line 5\n", "line five (a)\n")
    _edit(b, "notes.txt", "line 5\n", "line 5 by b\n")
    predictor = Predictor(base_repo)
    assert len(await predictor.round([a, b])) == 1
    (Path(a.path) / "unrelated.py").write_text("u = 1\n")  # the pair's common file is untouched
    again = await predictor.round([a, b])
    assert [c.files for c in again] == [("notes.txt",)]
    _edit(a, "notes.txt", "line five (a)\n", "line 5\n")  # a reverts: the conflict must go away
    assert await predictor.round([a, b]) == []
    _edit(a, "notes.txt", "line 7\n", "line seven\n")  # same file, other line: still none
    assert await predictor.round([a, b]) == []
    _edit(a, "notes.txt", "line 5\n", "line 5 again by a\n")
    assert [c.files for c in await predictor.round([a, b])] == [("notes.txt",)]


async def test_batched_snapshot_commits_are_what_commit_tree_writes(store: Store, base_repo: Path) -> None:
    from paragents.lanes.git import IDENTITY
    from paragents.lanes.predict import SNAPSHOT_DATE, parse_stdin_merges, snapshot_commit_body

    a, b = await _two(store, base_repo)
    _edit(a, "notes.txt", "line 5\n", "line five (a)\n")
    _edit(b, "notes.txt", "line 5\n", "line 5 by b\n")
    predictor = Predictor(base_repo)
    assert len(await predictor.round([a, b])) == 1
    calls = predictor.git_calls
    _edit(a, "notes.txt", "line five (a)\n", "line FIVE (a)\n")
    _edit(b, "notes.txt", "line 5 by b\n", "line 5 by B\n")
    assert [c.files for c in await predictor.round([a, b])] == [("notes.txt",)]
    # per lane: add + write-tree; then one hash-object (both commits) and one merge-tree; one rev-parse
    assert predictor.git_calls - calls == 2 * 2 + 3
    snap = predictor.last_snapshot(a)
    assert snap is not None and snap.commit
    env = {**IDENTITY, "GIT_AUTHOR_DATE": SNAPSHOT_DATE, "GIT_COMMITTER_DATE": SNAPSHOT_DATE}
    made = subprocess.run(
        ["git", "commit-tree", snap.tree, "-p", a.base_commit, "-m", "paragents snapshot of lane a"],
        cwd=base_repo, env={**os.environ, **env}, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert made == snap.commit
    assert snapshot_commit_body(snap.tree, a.base_commit, "a").startswith(b"tree ")
    assert parse_stdin_merges("1\0t1\0\0" + "0\0t2\0f\0g\0\0", 2) == [(), ("f", "g")]
    assert parse_stdin_merges("garbage", 1) is None


async def test_a_snapshot_between_rounds_does_not_hide_a_change_from_the_next_round(
    store: Store, base_repo: Path
) -> None:
    a, b = await _two(store, base_repo)
    _edit(a, "notes.txt", "line 5\n", "line five (a)\n")
    _edit(b, "notes.txt", "line 7\n", "line seven (b)\n")
    predictor = Predictor(base_repo)
    assert await predictor.round([a, b]) == []  # same file, other lines
    _edit(a, "notes.txt", "line seven", "never")  # no-op on a's copy
    _edit(a, "notes.txt", "line 7\n", "line 7 by a\n")  # now the same line as b
    await predictor.fresh(a)  # e.g. "show both sides" took a's change
    assert [c.files for c in await predictor.round([a, b])] == [("notes.txt",)]


async def test_a_round_after_one_lane_wrote_reads_only_that_lane(store: Store, base_repo: Path) -> None:
    a, b = await _two(store, base_repo)
    predictor = Predictor(base_repo)
    assert await predictor.round([a, b]) == []
    _edit(a, "notes.txt", "line 5\n", "line five (a)\n")
    _edit(b, "notes.txt", "line 5\n", "line 5 by b\n")
    calls = predictor.git_calls
    assert await predictor.round([a, b], only=frozenset({"a"})) == []  # b's edit is not read yet
    # a: add, write-tree, diff-tree... at most; never b's add
    assert predictor.git_calls - calls <= 4
    assert [c.files for c in await predictor.round([a, b], only=frozenset({"b"}))] == [("notes.txt",)]
    assert [c.files for c in await predictor.round([a, b])] == [("notes.txt",)]
