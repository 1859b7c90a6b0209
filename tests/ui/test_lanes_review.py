"""Pilot tests of the Lanes review screen's actions against real git in a temp repository and a real
Runtime on the loopback replay server: squash-merge after verify passes (message drafted by the
model), a merge refused while verify fails unless overridden, a merge refused when the lane moved
since the review, and "resolve in this lane" queueing a prompt to the lane's own session."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Button, Checkbox, Static, TextArea

from paragents.llm.replay import ReplayServer, ScriptedResponse
from paragents.sessions.runtime import Runtime
from paragents.ui.app import make_app
from paragents.ui.lanes.merge import MergeScreen
from paragents.ui.lanes.screen import LanesScreen
from tests.patience import HANG_GUARD_S
from tests.ui.bars import plain
from tests.ui.conftest import SIZE, wait_until
from tests.ui.helpers import git_repo, has_lane, notices

ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@e",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@e",
}


@pytest.fixture(autouse=True)
def git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """The merge commits are the user's: give git an identity (tests never read the home dir)."""
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)


def git(cwd: Path, *args: str) -> str:
    env = {**ENV, "PATH": "/usr/bin:/bin"}
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env)
    return done.stdout.strip()


def commit_in(path: Path, content: str, message: str, name: str = "app.py") -> str:
    (path / name).write_text(content)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", message)
    return git(path, "rev-parse", "HEAD")


def runtime_factory(tmp_path: Path, replay: ReplayServer, verify: str) -> Callable[[], Any]:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    overrides = {"base_url": replay.base_url, "model": "m", "max_retries": 0, "lanes": {"verify": verify}}

    async def factory() -> Runtime:
        return await Runtime.create(
            project_dir=project, cli_overrides=overrides, db_path=tmp_path / "db.sqlite"
        )

    return factory


async def open_lane_review(pilot: Any, app: Any, runtime: Any, name: str = "api") -> Any:
    """Open lane ``name`` (its commit made by the caller after), return its session view."""
    await wait_until(pilot, lambda: app.ready and len(app.panels) == 1, "the first panel")
    await pilot.press(*f"/new {name} --lane", "enter")
    await wait_until(pilot, partial(has_lane, runtime, name), name)
    return next(v for v in runtime.sessions.values() if v.name == name)


async def show_lanes(pilot: Any, app: Any) -> LanesScreen:
    await pilot.press(*"/lanes", "enter")
    await wait_until(pilot, lambda: isinstance(app.screen, LanesScreen), "the Lanes screen")
    screen = app.screen
    assert isinstance(screen, LanesScreen)
    return screen


async def run_verify(pilot: Any, screen: LanesScreen, passed: bool) -> None:
    await pilot.press("v")
    await wait_until(
        pilot, lambda: screen.reviews[0].verify is not None, "the verify result", timeout=HANG_GUARD_S
    )
    assert screen.reviews[0].verify.passed is passed
    body = plain(screen.query_one("#lane-body", Static))
    assert ("passed on" if passed else "FAILED (exit 1)") in body


async def open_merge(pilot: Any, app: Any, key: str = "s") -> MergeScreen:
    await pilot.press(key)
    await wait_until(pilot, lambda: isinstance(app.screen, MergeScreen), "the merge dialog")
    dialog = app.screen
    assert isinstance(dialog, MergeScreen)
    return dialog


async def test_squash_merge_from_the_screen_after_verify_passes(replay: ReplayServer, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    git_repo(project)
    runtime = await runtime_factory(tmp_path, replay, "grep -q 'return 2' app.py")()
    app = make_app(runtime)
    drafted = "Make hello return 2\n\nThe caller needs the new value."
    replay.add(ScriptedResponse.from_message(drafted))
    async with app.run_test(size=SIZE) as pilot:
        view = await open_lane_review(pilot, app, runtime)
        commit_in(view.workdir, "def hello():\n    return 2\n", "return 2")
        screen = await show_lanes(pilot, app)
        await run_verify(pilot, screen, passed=True)
        dialog = await open_merge(pilot, app)
        plan_text = plain(dialog.query_one("#plan-text", Static))
        assert "git merge-tree --write-tree" in plan_text and "git commit-tree <tree>" in plan_text
        assert "git -C" in plan_text and "merge --ff-only <new>" in plan_text  # main is checked out there
        assert "merges cleanly" in plan_text and "passed on" in plan_text
        area = dialog.query_one("#message", TextArea)
        await wait_until(pilot, lambda: area.text == drafted, "the drafted message")
        request = replay.requests[-1].body_json
        assert "return 2" in str(request["messages"]) and request.get("tools") is None
        area.load_text(drafted + "\n\nEdited by hand.")
        await pilot.click("#go")
        await wait_until(pilot, lambda: isinstance(app.screen, LanesScreen), "back on the Lanes screen")
        await wait_until(pilot, lambda: any(t.startswith("squash: 1 commit") for t in notices(app)), "merged")
        await wait_until(pilot, lambda: "(landed)" in screen.reviews[0].summary, "the review started over")
        assert (project / "app.py").read_text() == "def hello():\n    return 2\n"
        assert git(project, "log", "-1", "--format=%B").strip() == drafted + "\n\nEdited by hand."
        assert git(project, "rev-list", "--count", "HEAD") == "2"  # one squashed commit on main
        await app.shutdown_runtime()


async def test_merge_refused_while_verify_fails_unless_overridden(
    replay: ReplayServer, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    git_repo(project)
    runtime = await runtime_factory(tmp_path, replay, "grep -q 'return 3' app.py")()
    app = make_app(runtime)
    replay.add(ScriptedResponse.from_message("Return 2"))
    async with app.run_test(size=SIZE) as pilot:
        view = await open_lane_review(pilot, app, runtime)
        commit_in(view.workdir, "def hello():\n    return 2\n", "return 2")
        screen = await show_lanes(pilot, app)
        await run_verify(pilot, screen, passed=False)
        dialog = await open_merge(pilot, app)
        await wait_until(pilot, lambda: dialog.query_one("#message", TextArea).text == "Return 2", "draft")
        await pilot.click("#go")
        status = dialog.query_one("#status", Static)
        await wait_until(pilot, lambda: "Merge refused: verify:" in plain(status), "the refusal")
        assert app.screen is dialog and git(project, "rev-list", "--count", "main") == "1"
        dialog.query_one("#override", Checkbox).value = True
        go = dialog.query_one("#go", Button)  # a Button ignores clicks during its 0.2 s press effect
        await wait_until(pilot, lambda: not go.has_class("-active"), "the first click's effect to end")
        await pilot.click("#go")
        await wait_until(pilot, lambda: any(t.startswith("squash: 1 commit") for t in notices(app)), "merged")
        await wait_until(pilot, lambda: "(landed)" in screen.reviews[0].summary, "the review started over")
        assert git(project, "show", "main:app.py") == "def hello():\n    return 2"
        await app.shutdown_runtime()


async def test_merge_refused_when_the_lane_moved_since_the_review(
    replay: ReplayServer, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    git_repo(project)
    runtime = await runtime_factory(tmp_path, replay, "true")()
    app = make_app(runtime)
    replay.add(ScriptedResponse.from_message("Return 2"))
    async with app.run_test(size=SIZE) as pilot:
        view = await open_lane_review(pilot, app, runtime)
        reviewed = commit_in(view.workdir, "def hello():\n    return 2\n", "return 2")
        screen = await show_lanes(pilot, app)
        await run_verify(pilot, screen, passed=True)
        dialog = await open_merge(pilot, app)
        await wait_until(pilot, lambda: dialog.query_one("#message", TextArea).text == "Return 2", "draft")
        moved = commit_in(view.workdir, "def hello():\n    return 22\n", "unreviewed change")
        await pilot.click("#go")
        await wait_until(pilot, lambda: any("moved since" in t for t in notices(app)), "the refusal")
        note = next(t for t in notices(app) if "moved since" in t)
        assert reviewed[:12] in note and moved[:12] in note and "review starts over" in note
        assert git(project, "rev-list", "--count", "main") == "1"  # nothing merged
        await wait_until(pilot, lambda: screen.reviews[0].head == moved, "the review started over")
        assert app.screen is screen
        await app.shutdown_runtime()


async def test_resolve_in_this_lane_queues_a_prompt_to_its_session(
    replay: ReplayServer, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    git_repo(project)
    runtime = await runtime_factory(tmp_path, replay, "true")()
    app = make_app(runtime)
    replay.add(ScriptedResponse.from_message("Return 2"))
    replay.add(ScriptedResponse.from_message("Rebased and resolved."), session="api")
    async with app.run_test(size=SIZE) as pilot:
        view = await open_lane_review(pilot, app, runtime)
        ours = commit_in(view.workdir, "def hello():\n    return 2\n", "lane: return 2")
        theirs = commit_in(project, "def hello():\n    return 3\n", "main: return 3")
        await show_lanes(pilot, app)
        dialog = await open_merge(pilot, app)
        assert "conflict in: app.py" in plain(dialog.query_one("#plan-text", Static))
        assert dialog.query_one("#resolve", Button)
        await pilot.click("#resolve")
        await wait_until(
            pilot, lambda: any("resolve the conflict in app.py" in t for t in notices(app)), "queued"
        )
        await wait_until(pilot, lambda: any(r.session == "api" for r in replay.requests), "the lane's turn")
        sent = [r for r in replay.requests if r.session == "api"]
        prompt = str(sent[0].body_json["messages"][-1]["content"])
        assert "would conflict in: app.py" in prompt
        assert ours[:7] in prompt and theirs[:7] in prompt and "lane: return 2" in prompt
        await app.shutdown_runtime()


async def test_discard_bundles_the_work_closes_the_session_and_removes_the_lane(
    replay: ReplayServer, tmp_path: Path
) -> None:
    from paragents.ui.lanes.merge import ConfirmScreen

    project = tmp_path / "project"
    project.mkdir()
    git_repo(project)
    runtime = await runtime_factory(tmp_path, replay, "true")()
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        view = await open_lane_review(pilot, app, runtime)
        lane_path = view.workdir
        commit_in(lane_path, "def hello():\n    return 2\n", "unmerged work")
        (lane_path / "wip.txt").write_text("uncommitted\n")
        screen = await show_lanes(pilot, app)
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the discard confirmation")
        assert "git bundle create" in plain(app.screen.query(Static)[1])
        await pilot.click("#yes")
        await wait_until(
            pilot, lambda: any(t.startswith("Lane api discarded") for t in notices(app)), "discarded"
        )
        await wait_until(pilot, lambda: screen.reviews == [], "the review started over")
        note = next(t for t in notices(app) if t.startswith("Lane api discarded"))
        assert "git fetch" in note and not lane_path.exists() and view.id not in app.panels
        bundles = list(Path(note.split("Work saved in ")[1].split(";")[0]).parent.glob("*-api-*.bundle"))
        assert len(bundles) == 1
        heads = git(project, "bundle", "list-heads", str(bundles[0]))
        assert "refs/heads/paragents/api" in heads and "refs/paragents/recovery/api" in heads
        await app.shutdown_runtime()
