"""Sessions in lanes: /new --lane and run --lane put the session's workdir and sandbox root in the
lane's worktree, its commands get the lane's ports, and lanes come back after a restart."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from paragents import events as ev
from paragents.cli import main
from paragents.events import PermissionAnswer
from paragents.llm.replay import ReplayServer, ScriptedResponse, ThreadedReplayServer
from paragents.sessions import Runtime, SessionError
from paragents.ui.core.commands import SlashCommand, parse_command
from tests.lanes.conftest import commit_all, sh
from tests.runtime_env import Collector


def reply(content: str = "", **kw: object) -> ScriptedResponse:
    return ScriptedResponse.from_message(content=content, **kw)  # type: ignore[arg-type]


@pytest.fixture
async def server() -> AsyncIterator[ReplayServer]:
    async with ReplayServer(models=["m"]) as replay:
        yield replay


async def _runtime(
    server: ReplayServer, project: Path, db: Path, **overrides: object
) -> tuple[Runtime, Collector]:
    cfg = {"base_url": server.base_url, "model": "m", "max_retries": 0, "sandbox": "off", **overrides}
    rt = await Runtime.create(project, cli_overrides=cfg, db_path=db)
    sink = Collector()
    rt.set_sink(sink)
    return rt, sink


async def test_session_in_a_lane_works_there_with_its_ports(
    server: ReplayServer, repo: Path, tmp_path: Path
) -> None:
    rt, sink = await _runtime(server, repo, tmp_path / "db.sqlite")
    try:
        view = await rt.new_session("api", lane=True)
        lane = await rt.store.lanes.of_session(view.id)
        assert lane is not None and lane.name == "api"
        assert view.workdir == Path(lane.path) == view.sandbox_root and view.lane == "api"
        assert view.lane_notes[0].startswith("working in lane api (paragents/api)")
        assert not sink.of(ev.Notice, view.id)  # a TUI shows them once its panel is mounted
        sink.answers.append(PermissionAnswer("allow_once"))
        args = json.dumps({"command": "echo $PORT $PARAGENTS_PORT > port.txt"})
        server.add(reply(tool_calls=[{"id": "c1", "name": "run_command", "arguments": args}]), session="api")
        server.add(reply("done"), session="api")
        rt.submit(view.id, "write the port")
        await rt.wait_idle(view.id)
        assert (Path(lane.path) / "port.txt").read_text().split() == [str(lane.port_base)] * 2
        assert not (repo / "port.txt").exists()
        report = await rt.lane_report(view.id)
        assert report.startswith("this session works in lane api") and f"ports {lane.port_base}-" in report
    finally:
        await rt.shutdown()


async def test_lanes_survive_a_restart(server: ReplayServer, repo: Path, tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    rt, _ = await _runtime(server, repo, db)
    view = await rt.new_session("web", lane=True)
    path = view.workdir
    await rt.shutdown()
    again, _ = await _runtime(server, repo, db)
    try:
        [restored] = await again.restore()
        assert restored.lane == "web" and restored.sandbox_root == path and restored.workdir == path
        record = await again.store.lanes.of_session(restored.id)
        assert record is not None and restored.lane_env["PORT"] == str(record.port_base)
    finally:
        await again.shutdown()


async def test_a_lane_that_cannot_be_made_creates_no_session(
    server: ReplayServer, empty_repo: Path, tmp_path: Path
) -> None:
    rt, _ = await _runtime(server, empty_repo, tmp_path / "db.sqlite")
    try:
        with pytest.raises(SessionError, match="git commit --allow-empty -m init"):
            await rt.new_session("x", lane=True)
        assert await rt.list_sessions() == [] and await rt.store.lanes.all() == []
    finally:
        await rt.shutdown()


async def test_auto_mode_gives_the_second_writer_a_lane(
    server: ReplayServer, repo: Path, tmp_path: Path
) -> None:
    rt, _ = await _runtime(server, repo, tmp_path / "db.sqlite", lanes="auto")
    try:
        first = await rt.new_session("one")
        second = await rt.new_session("two", base="main")
        assert first.lane is None and first.workdir == repo
        assert second.lane == "two" and second.workdir != repo
    finally:
        await rt.shutdown()


def parsed(text: str) -> SlashCommand:
    command = parse_command(text)
    assert isinstance(command, SlashCommand), command
    return command


def test_new_command_parses_lane_and_base() -> None:
    new = parsed("/new api --lane --base origin/main")
    assert new.arg == "api" and new.options == {"lane": "", "base": "origin/main"}
    named = parsed("/new api --lane=feature")
    assert named.options == {"lane": "feature"}
    assert parsed("/lane").name == "lane"


def test_run_with_lane_opens_the_session_in_a_lane(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / ".paragents").mkdir()
    (repo / ".paragents" / "worktree.toml").write_text('setup = ["echo set up > setup.txt", "echo [b]hi"]\n')
    commit_all(repo, "setup")
    with ThreadedReplayServer(models=["m"]) as replay:
        replay.add(reply("hi"))
        code = main(
            [
                "run",
                "--lane",
                "r1",
                "--dir",
                str(repo),
                "--endpoint",
                replay.base_url,
                "--model",
                "m",
                "hello",
            ]
        )
    assert code == 0
    lanes = sh(repo, "worktree", "list")
    assert "[paragents/r1]" in lanes
    path = Path(lanes.splitlines()[1].split()[0])
    assert (path / "setup.txt").read_text() == "set up\n"
    assert "[r1 setup] [b]hi" in capsys.readouterr().err  # the setup's output, as it ran, as text


async def test_two_lane_sessions_editing_one_function_get_a_predicted_conflict(
    server: ReplayServer, repo: Path, tmp_path: Path
) -> None:
    rt, sink = await _runtime(server, repo, tmp_path / "db.sqlite")
    try:
        api = await rt.new_session("api", lane=True)
        web = await rt.new_session("web", lane=True)
        rt.lane_watcher.debounce = 0
        for view, body in ((api, "return 'api'"), (web, "return 'web'")):
            sink.answers.append(PermissionAnswer("allow_once"))
            args = json.dumps({"path": "app.py", "content": f"def hello():\n    {body}\n"})
            server.add(
                reply(tool_calls=[{"id": "w", "name": "write_file", "arguments": args}]), session=view.name
            )
            server.add(reply("edited"), session=view.name)
            rt.submit(view.id, "change hello")
            await rt.wait_idle(view.id)
        assert (Path(api.workdir) / "app.py").read_text() != (repo / "app.py").read_text()

        def predicted(view_id: str) -> bool:
            return any("conflict predicted" in n.text for n in sink.of(ev.Notice, view_id))

        await sink.wait_for(lambda: predicted(api.id) and predicted(web.id))
        [note] = [n.text for n in sink.of(ev.Notice, web.id) if "conflict predicted" in n.text]
        assert note == "conflict predicted: api conflicts with web in app.py (neither has merged yet)"
        assert sh(repo, "log", "--format=%s") == "init"  # nothing was merged or committed
    finally:
        await rt.shutdown()


async def test_startup_names_lanes_left_from_closed_sessions(
    server: ReplayServer, repo: Path, tmp_path: Path
) -> None:
    db = tmp_path / "db.sqlite"
    rt, _ = await _runtime(server, repo, db)
    view = await rt.new_session("old", lane=True)
    await rt.close_session(view.id)
    await rt.shutdown()
    again, _ = await _runtime(server, repo, db)
    try:
        await again.restore()
        assert any(note.startswith("1 lane(s) left from earlier sessions: old") for note in again.notes)
    finally:
        await again.shutdown()


async def test_auto_mode_outside_git_falls_back_to_the_shared_checkout(
    server: ReplayServer, tmp_path: Path
) -> None:
    project = tmp_path / "plain"
    project.mkdir()
    rt, _ = await _runtime(server, project, tmp_path / "db.sqlite", lanes="auto")
    try:
        await rt.new_session("one")
        second = await rt.new_session("two")
        assert second.lane is None and second.workdir == project
        assert any(
            "two shares the checkout" in note and "not inside a git repository" in note for note in rt.notes
        )
    finally:
        await rt.shutdown()


async def test_lane_gc_command_removes_landed_lanes_and_keeps_open_ones(
    server: ReplayServer, repo: Path, tmp_path: Path
) -> None:
    rt, _ = await _runtime(server, repo, tmp_path / "db.sqlite")
    try:
        done = await rt.new_session("done", lane=True)
        await rt.new_session("open", lane=True)
        await rt.close_session(done.id)
        text = await rt.lane_gc()
        assert "removed done" in text and "keep open: its session is open in paragents" in text
        assert parsed("/lane gc").arg == "gc"
    finally:
        await rt.shutdown()


async def test_adapt_queues_a_prompt_naming_the_files_and_the_other_lanes_change(
    server: ReplayServer, repo: Path, tmp_path: Path
) -> None:
    rt, _ = await _runtime(server, repo, tmp_path / "db.sqlite")
    try:
        api = await rt.new_session("api", lane=True)
        web = await rt.new_session("web", lane=True)
        (api.workdir / "app.py").write_text("def hello():\n    return 'api'\n")
        (web.workdir / "app.py").write_text("def hello():\n    return 'web'\n")
        with pytest.raises(SessionError, match="shared checkout"):
            await rt.adapt_lane((await rt.new_session("plain")).id)
        server.add(reply("adapted"), session="api")
        await rt.adapt_lane(api.id)
        await rt.wait_idle(api.id)
        prompt = server.requests[-1].body_json["messages"][-1]["content"]
        assert "Conflicting file(s) with lane web: app.py" in prompt
        assert "+    return 'web'" in prompt and "return 'api'" not in prompt
    finally:
        await rt.shutdown()
