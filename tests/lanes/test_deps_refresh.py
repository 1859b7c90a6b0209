"""A lockfile changed in a lane after its environment was built: the install runs in the lane's
sandbox, into the lane's own environment (nothing outside the lane changes; a write outside is
refused by the sandbox), or the command is offered; in a session, the lane's watcher does it and says
so in the lane's panel."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from paragents import events as ev
from paragents.config import LaneSettings
from paragents.lanes import create_lane
from paragents.lanes.deps import refresh_dependencies
from paragents.lanes.overview import stale_dependencies
from paragents.llm.replay import ReplayServer
from paragents.sessions import Runtime
from paragents.store import Store
from tests.lanes.conftest import commit_all
from tests.runtime_env import Collector

INSTALL = (
    'install = "echo installing for $PARAGENTS_LANE; mkdir -p .venv && touch .venv/own; '
    'touch $PARAGENTS_ROOT/../outside || true"\n'
)


def _locked_repo(repo: Path, toml: str | None, lock: str = "uv.lock") -> None:
    (repo / ".gitignore").write_text(".venv/\n")
    (repo / lock).write_text("version = 1\n")
    if toml is not None:
        (repo / ".paragents").mkdir()
        (repo / ".paragents" / "worktree.toml").write_text(toml)
    commit_all(repo, "lock")
    (repo / ".venv").mkdir()
    (repo / ".venv" / "main-only").write_text("")


async def test_changed_lockfile_runs_the_install_in_the_lanes_sandbox(store: Store, repo: Path) -> None:
    _locked_repo(repo, INSTALL)
    lane = (await create_lane(store, repo, "deps")).lane
    venv = Path(lane.path) / ".venv"
    assert await refresh_dependencies(repo, lane, LaneSettings()) is None  # nothing changed yet
    (Path(lane.path) / "uv.lock").write_text("version = 2\n")
    done = await refresh_dependencies(repo, lane, LaneSettings())
    assert done is not None and done.ran and done.ok, done
    assert "uv.lock changed in lane deps" in done.text and "installing for deps" in done.output
    assert "in the lane's sandbox" in done.text
    assert venv.is_dir() and not venv.is_symlink() and (venv / "own").exists()
    assert sorted(p.name for p in (repo / ".venv").iterdir()) == ["main-only"]  # the main one: untouched
    assert not (repo.parent / "outside").exists()  # the sandbox kept the install inside the lane
    await store.lanes.update(lane.id, lockfiles=done.lockfiles)
    refreshed = await store.lanes.get_by_id(lane.id)
    assert refreshed is not None and stale_dependencies(refreshed) == []


async def test_a_lockfile_paragents_does_not_install_is_offered(store: Store, repo: Path) -> None:
    _locked_repo(repo, None, "poetry.lock")
    lane = (await create_lane(store, repo, "deps")).lane
    (Path(lane.path) / "poetry.lock").write_text("version = 2\n")
    done = await refresh_dependencies(repo, lane, LaneSettings())
    assert done is not None and not done.ran and "run `poetry install` in the lane" in done.text


@pytest.fixture
async def server() -> AsyncIterator[ReplayServer]:
    async with ReplayServer(models=["m"]) as replay:
        yield replay


async def test_the_lane_watcher_runs_it_and_tells_the_lanes_session(
    server: ReplayServer, repo: Path, tmp_path: Path
) -> None:
    _locked_repo(repo, INSTALL)
    cfg = {"base_url": server.base_url, "model": "m", "max_retries": 0}
    rt = await Runtime.create(repo, cli_overrides=cfg, db_path=tmp_path / "db.sqlite")
    sink = Collector()
    rt.set_sink(sink)
    try:
        view = await rt.new_session("api", lane=True)
        (Path(view.workdir) / "uv.lock").write_text("version = 2\n")
        await rt.lane_watcher.run_round()
        await sink.wait_for(
            lambda: any("in the lane's sandbox" in n.text for n in sink.of(ev.Notice, view.id))
        )
        assert (Path(view.workdir) / ".venv" / "own").exists()
        lane = await rt.store.lanes.of_session(view.id)
        assert lane is not None and stale_dependencies(lane) == []
    finally:
        await rt.shutdown()
