"""`paragents lanes ...` headless with real git: list/diff/merge/gc and their exit codes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from paragents.cli import main
from paragents.lanes import create_lane
from paragents.store import LaneRecord, Store
from tests.lanes.conftest import commit_all, sh
from tests.trusting import trusted


def make_lane(repo: Path, name: str, files: dict[str, str] | None = None, commit: bool = True) -> LaneRecord:
    async def go() -> LaneRecord:
        async with await Store.open() as store:
            return (await create_lane(store, repo, name, setup=False)).lane

    lane = asyncio.run(go())
    for rel, text in (files or {}).items():
        (Path(lane.path) / rel).write_text(text)
    if files and commit:
        commit_all(Path(lane.path), f"{name} edits")
    return lane


def lanes(repo: Path, *args: str) -> int:
    return main(["lanes", *args, "--dir", str(repo)])


def test_list_json_shows_ports_and_work(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lane = make_lane(repo, "api", {"api.py": "x = 1\n"})
    assert lanes(repo, "list", "--json") == 0
    [row] = json.loads(capsys.readouterr().out)
    assert row["name"] == "api" and row["ahead"] == 1 and row["dirty"] == 0
    assert row["ports"] == [lane.port_base, lane.port_base + 9]


def test_diff_includes_untracked_files(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_lane(repo, "d", {"new.py": "print('hi')\n"}, commit=False)
    assert lanes(repo, "diff", "d", "--stat") == 0
    assert "new.py  +1 -0" in capsys.readouterr().out


def test_squash_merge_then_gc_removes_it(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_lane(repo, "sq", {"a.py": "a\n"})
    make_lane(repo, "sq2")  # never worked in: nothing to keep
    assert lanes(repo, "merge", "sq", "--strategy", "squash") == 0
    assert (repo / "a.py").read_text() == "a\n"  # the main checkout moved with its branch
    assert sh(repo, "log", "-1", "--format=%s") == "Squash lane sq (paragents/sq)"
    assert sh(repo, "status", "--porcelain") == ""
    capsys.readouterr()
    assert lanes(repo, "gc", "--apply") == 0
    out = capsys.readouterr().out
    assert "removed  sq" in out and "removed  sq2" in out


def test_rebase_and_merge_commit_strategies(repo: Path) -> None:
    make_lane(repo, "r", {"r.py": "r\n"})
    make_lane(repo, "m", {"m.py": "m\n"})
    (repo / "main.py").write_text("main\n")
    commit_all(repo, "main moves")
    assert lanes(repo, "merge", "r", "--strategy", "rebase") == 0
    assert sh(repo, "merge-base", "--is-ancestor", "paragents/r", "main") == ""
    assert sh(repo, "log", "-1", "--format=%s") == "r edits"
    assert lanes(repo, "merge", "m", "--strategy", "merge") == 0
    assert len(sh(repo, "log", "-1", "--format=%P").split()) == 2
    assert all((repo / f).exists() for f in ("r.py", "m.py", "main.py"))


def test_predicted_conflict_exits_5_and_changes_nothing(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_lane(repo, "c", {"app.py": "def hello():\n    return 'lane'\n"})
    (repo / "app.py").write_text("def hello():\n    return 'main'\n")
    tip = commit_all(repo, "main edits hello")
    assert lanes(repo, "merge", "c") == 5
    assert "would conflict in app.py" in capsys.readouterr().err
    assert sh(repo, "rev-parse", "main") == tip


def test_failing_verify_exits_4(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_lane(repo, "v", {"v.py": "v\n"})
    (repo / "runtime_config.json").write_text(json.dumps({"lanes": {"verify": "echo checking; exit 1"}}))
    trusted(repo)
    before = sh(repo, "rev-parse", "main")
    assert lanes(repo, "merge", "v") == 4
    err = capsys.readouterr().err
    assert "checking" in err and "verify failed" in err
    assert sh(repo, "rev-parse", "main") == before
    assert lanes(repo, "merge", "v", "--no-verify") == 0


def test_gc_refuses_unmerged_work_with_6_and_force_bundles(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lane = make_lane(repo, "keep", {"k.py": "k\n"})
    assert lanes(repo, "gc", "--apply") == 6
    assert "keep     keep: 1 commit(s) not on main" in capsys.readouterr().out
    assert Path(lane.path).exists()
    assert lanes(repo, "gc", "--apply", "--force") == 0
    out = capsys.readouterr().out
    assert "work saved in" in out and "git fetch" in out and not Path(lane.path).exists()


def test_an_unknown_lane_is_a_usage_error_exit_2_naming_the_lanes(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_lane(repo, "api")
    assert lanes(repo, "diff", "nosuch") == 2
    err = capsys.readouterr().err
    assert "no lane named 'nosuch'" in err and "(lanes: api)" in err
