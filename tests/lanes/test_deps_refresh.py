"""A lockfile changed mid-lane while ``.venv`` is still linked to the main checkout's: the setup's
``install`` command runs in the lane (only the link is removed), or the usual command is offered; in a
session, the lane's watcher does it and says so in the lane's panel."""

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
from tests.engine.conftest import Collector
from tests.lanes.conftest import commit_all

INSTALL = 'install = "echo installing for $PARAGENTS_LANE; mkdir .venv && touch .venv/own"\n'


def _locked_repo(repo: Path, toml: str | None) -> None:
    (repo / ".gitignore").write_text(".venv/\n")
    (repo / "uv.lock").write_text("version = 1\n")
    if toml is not None:
        (repo / ".paragents").mkdir()
        (repo / ".paragents" / "worktree.toml").write_text(toml)
    commit_all(repo, "lock")
    (repo / ".venv").mkdir()
    (repo / ".venv" / "main-only").write_text("")


async def test_changed_lockfile_runs_the_install_in_the_lane(store: Store, repo: Path) -> None:
    _locked_repo(repo, INSTALL)
    lane = (await create_lane(store, repo, "deps")).lane
    venv = Path(lane.path) / ".venv"
    assert venv.is_symlink()
    assert await refresh_dependencies(repo, lane, LaneSettings()) is None  # nothing stale yet
    (Path(lane.path) / "uv.lock").write_text("version = 2\n")
    done = await refresh_dependencies(repo, lane, LaneSettings())
    assert done is not None and done.ran and done.ok, done
    assert "uv.lock changed in lane deps" in done.text and "installing for deps" in done.output
    assert venv.is_dir() and not venv.is_symlink() and (venv / "own").exists()
    assert (repo / ".venv" / "main-only").exists()  # the main checkout's folder is untouched
    await store.update_lane(lane.id, lockfiles=done.lockfiles)
    refreshed = await store.get_lane_by_id(lane.id)
    assert refreshed is not None and stale_dependencies(refreshed) == []


async def test_without_an_install_command_the_usual_one_is_offered(store: Store, repo: Path) -> None:
    _locked_repo(repo, None)
    lane = (await create_lane(store, repo, "deps")).lane
    (Path(lane.path) / "uv.lock").write_text("version = 2\n")
    done = await refresh_dependencies(repo, lane, LaneSettings())
    assert done is not None and not done.ran and "run `uv sync` in the lane" in done.text
    assert (Path(lane.path) / ".venv").is_symlink()


@pytest.fixture
async def server() -> AsyncIterator[ReplayServer]:
    async with ReplayServer(models=["m"]) as replay:
        yield replay


async def test_the_lane_watcher_runs_it_and_tells_the_lanes_session(
    server: ReplayServer, repo: Path, tmp_path: Path
) -> None:
    _locked_repo(repo, INSTALL)
    cfg = {"base_url": server.base_url, "model": "m", "max_retries": 0, "sandbox": "off"}
    rt = await Runtime.create(repo, cli_overrides=cfg, db_path=tmp_path / "db.sqlite")
    sink = Collector()
    rt.set_sink(sink)
    try:
        view = await rt.new_session("api", lane=True)
        (Path(view.workdir) / "uv.lock").write_text("version = 2\n")
        await rt.lane_watcher.run_round()
        await sink.wait_for(lambda: any("ran the install" in n.text for n in sink.of(ev.Notice, view.id)))
        assert (Path(view.workdir) / ".venv" / "own").exists()
        lane = await rt.store.lane_of_session(view.id)
        assert (
            lane is not None
            and stale_dependencies(lane) == []
            and not (Path(lane.path) / ".venv").is_symlink()
        )
    finally:
        await rt.shutdown()
