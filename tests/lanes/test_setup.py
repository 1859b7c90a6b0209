"""Lane setup from each of the four formats, .worktreeinclude, and symlink vs install by lockfile."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paragents.config import LaneSettings
from paragents.lanes import LaneError, create_lane
from paragents.store import Store
from tests.lanes.conftest import commit_all, sh


def _write(repo: Path, rel: str, text: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


async def test_conductor_json_gets_its_variables(store: Store, repo: Path) -> None:
    _write(
        repo,
        "conductor.json",
        json.dumps({"scripts": {"setup": 'echo "$CONDUCTOR_PORT $CONDUCTOR_ROOT_PATH" > port.txt'}}),
    )
    commit_all(repo, "conductor")
    lines: list[str] = []
    lane = (await create_lane(store, repo, "c", on_output=lines.append)).lane
    port, root = (Path(lane.path) / "port.txt").read_text().split()
    assert int(port) == lane.port_base and root == str(repo)
    assert lines[0].startswith("$ echo") and lane.setup_state == "ready"


@pytest.mark.parametrize(
    ("rel", "text"),
    [
        (".paragents/worktree.toml", 'setup = ["echo $PARAGENTS_PORT > marker"]\n'),
        (".codex/environments/environment.toml", 'setup = "echo $PORT > marker"\ncleanup = "true"\n'),
        (".cursor/worktrees.json", json.dumps({"setup-worktree": ["echo $PORT > marker"]})),
    ],
)
async def test_each_setup_format_runs_in_the_lane(store: Store, repo: Path, rel: str, text: str) -> None:
    _write(repo, rel, text)
    commit_all(repo, "setup")
    lane = (await create_lane(store, repo, "s")).lane
    assert (Path(lane.path) / "marker").read_text().strip() == str(lane.port_base)
    assert not (repo / "marker").exists()


async def test_first_format_found_wins(store: Store, repo: Path) -> None:
    _write(repo, ".paragents/worktree.toml", 'setup = "echo paragents > won"\n')
    _write(repo, "conductor.json", json.dumps({"scripts": {"setup": "echo conductor > won"}}))
    commit_all(repo, "both")
    lane = (await create_lane(store, repo, "w")).lane
    assert (Path(lane.path) / "won").read_text().strip() == "paragents"


async def test_worktreeinclude_copies_matching_ignored_files(store: Store, repo: Path) -> None:
    _write(repo, ".gitignore", ".env\n*.local\nbuild/\n")
    _write(repo, ".worktreeinclude", ".env\n*.local\n")
    commit_all(repo, "ignore")
    _write(repo, ".env", "SECRET=1\n")
    _write(repo, "conf/dev.local", "x\n")
    _write(repo, "build/out.bin", "big\n")
    lane = Path((await create_lane(store, repo, "i")).lane.path)
    assert (lane / ".env").read_text() == "SECRET=1\n"
    assert (lane / "conf/dev.local").exists()
    assert not (lane / "build").exists()


async def test_a_lane_never_links_the_main_checkouts_venv(store: Store, repo: Path) -> None:
    """Issue 27 item 1: the lane's ``.venv`` is never a link to the main checkout's (its own is built
    from the lockfile when there is a project: tests/lanes/test_own_env.py)."""
    _write(repo, ".gitignore", ".venv/\nnode_modules/\n")
    _write(repo, "uv.lock", "version = 1\n")
    _write(repo, "package-lock.json", "{}\n")
    commit_all(repo, "lock")
    (repo / ".venv").mkdir()
    (repo / "node_modules").mkdir()
    lane = Path((await create_lane(store, repo, "same")).lane.path)
    for folder in (".venv", "node_modules"):
        assert not (lane / folder).is_symlink() and not (lane / folder).exists()
    assert sh(lane, "status", "--porcelain") == ""


async def test_failing_setup_removes_the_lane_and_keeps_output(store: Store, repo: Path) -> None:
    _write(repo, ".paragents/worktree.toml", 'setup = "echo building; exit 3"\n')
    commit_all(repo, "bad")
    with pytest.raises(LaneError, match="exited with 3") as info:
        await create_lane(store, repo, "bad")
    assert "building" in info.value.output
    log = Path(str(info.value).split("output kept in ")[1].rstrip(")"))
    assert "building" in log.read_text()
    assert await store.lanes.all() == []
    assert "paragents/bad" not in sh(repo, "branch", "--list")
    assert sh(repo, "worktree", "list").count("\n") == 0


async def test_hanging_setup_is_stopped_at_the_timeout(store: Store, repo: Path) -> None:
    _write(repo, ".paragents/worktree.toml", 'setup = "sleep 30"\n')
    commit_all(repo, "hang")
    with pytest.raises(LaneError, match=r"did not finish within 0\.5 s"):
        await create_lane(store, repo, "hang", settings=LaneSettings(setup_timeout=0.5))
    assert await store.lanes.all() == []


async def test_lockfile_changed_mid_lane_is_named_in_the_overview(store: Store, repo: Path) -> None:
    from paragents.lanes.overview import lane_rows

    _write(repo, ".gitignore", ".venv/\n")
    _write(repo, "uv.lock", "version = 1\n")
    commit_all(repo, "lock")
    lane = (await create_lane(store, repo, "deps")).lane
    [row] = await lane_rows(store.lanes, repo)
    assert row["stale_dependencies"] == []
    _write(Path(lane.path), "uv.lock", "version = 2\n")
    [row] = await lane_rows(store.lanes, repo)
    assert row["stale_dependencies"] == ["uv.lock"] and "deps stale" in row["line"]
