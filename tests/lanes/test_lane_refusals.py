"""Readable refusals found by scenario tests (issue 27 items 8-10), with real git: paragents' own
``.paragents/`` never makes the main checkout "uncommitted"; a lane whose worktree ``.git`` file is
broken is named (where its files are, how to repair it) while ``lanes list`` and ``lanes gc --apply
--force`` go on with the other lanes; a lane name held by a session names that session and never
suggests deleting a live lane's branch."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from paragents.cli import main
from paragents.lanes import LaneError, create_lane
from paragents.store import Store
from tests.lanes.conftest import sh


async def test_paragents_own_files_never_count_as_uncommitted(store: Store, repo: Path) -> None:
    (repo / ".paragents").mkdir()
    (repo / ".paragents" / ".gitignore").write_text("permissions.local.json\n")
    (repo / ".paragents" / "permissions.local.json").write_text("{}")
    made = await create_lane(store, repo, "first", setup=False)
    assert not any("uncommitted" in note for note in made.notes), made.notes
    (repo / "notes.txt").write_text("mine\n")  # the user's own change still counts
    made = await create_lane(store, repo, "second", setup=False)
    assert any("uncommitted changes" in note for note in made.notes)


def _lanes(repo: Path, *args: str) -> int:
    return main(["lanes", *args, "--dir", str(repo)])


def test_a_broken_lane_is_named_and_the_others_go_on(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    async def make() -> tuple[str, str]:
        async with await Store.open() as store:
            broken = (await create_lane(store, repo, "broken", setup=False)).lane
            done = (await create_lane(store, repo, "done", setup=False)).lane
            return broken.path, done.path

    broken, _done = asyncio.run(make())
    (Path(broken) / "work.txt").write_text("untracked work\n")
    (Path(broken) / ".git").write_text("gitdir: /nonexistent/worktrees/broken\n")
    assert _lanes(repo, "list", "--json") == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["done"]["broken"] is None
    why = rows["broken"]["broken"]
    assert (
        "lane broken" in why and broken in why and f"rm -rf {broken}" in why and "git worktree prune" in why
    )
    assert "run `git worktree repair" not in why  # its .git file points out of the repository
    assert _lanes(repo, "gc", "--apply", "--force") == 6  # the broken lane holds work: kept
    out = capsys.readouterr().out
    assert "removed  done" in out and "keep     broken" in out and "git worktree prune" in out
    assert (Path(broken) / "work.txt").read_text() == "untracked work\n"  # its files are kept


async def test_a_lane_name_held_by_a_session_names_it(store: Store, repo: Path) -> None:
    session = await store.sessions.create(name="api-session", project_dir=repo, workdir=repo, model="m")
    await create_lane(store, repo, "api", setup=False, session_id=session.id)
    with pytest.raises(LaneError) as taken:
        await create_lane(store, repo, "api", setup=False)
    text = str(taken.value)
    assert "session 'api-session' works in it" in text and "git branch -D" not in text
    assert "paragents/api" in sh(repo, "branch", "--list")  # the live lane's branch is untouched
