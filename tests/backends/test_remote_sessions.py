"""Sessions in container lanes through the real engine (docs/remote.md "phase 2"): the tool calls of a
session opened with ``--on container`` run in its container while the agent loop, the policy and the
store stay here; prediction rounds fetch the lanes' snapshots; gc removes a container only after its
work is fetched; a lost engine pauses the session and it resumes when the engine answers."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from paragents import events as ev
from paragents.events import PermissionAnswer
from paragents.lanes.gc import gc
from paragents.lanes.repo import project_hash
from paragents.llm.replay import ReplayServer, ScriptedResponse
from paragents.models import SessionState
from paragents.sessions import Runtime, SessionError
from tests.backends.dockerproxy import EngineProxy
from tests.backends.engine import Engine, git
from tests.runtime_env import Collector


def reply(content: str = "", **kw: object) -> ScriptedResponse:
    return ScriptedResponse.from_message(content=content, **kw)  # type: ignore[arg-type]


def call(name: str, cid: str = "c1", **args: object) -> ScriptedResponse:
    return reply(tool_calls=[{"id": cid, "name": name, "arguments": json.dumps(args)}])


def docker(engine: Engine, *args: str) -> str:
    return subprocess.run(
        ["docker", *args], env={"DOCKER_HOST": engine.host, "PATH": "/usr/local/bin:/usr/bin:/bin"},
        capture_output=True, text=True, check=False,
    ).stdout.strip()  # fmt: skip


@pytest.fixture
async def server() -> AsyncIterator[ReplayServer]:
    async with ReplayServer(models=["m"]) as replay:
        yield replay


async def runtime(
    server: ReplayServer, repo: Path, db: Path, engine: Engine, host: str | None = None
) -> tuple[Runtime, Collector]:
    lanes = {"image": engine.image, "container": {"host": host or engine.host, "connect_timeout": 3}}
    cfg: dict[str, Any] = {"base_url": server.base_url, "model": "m", "max_retries": 0, "sandbox": "off",
                           "lanes": lanes}  # fmt: skip
    rt = await Runtime.create(repo, cli_overrides=cfg, db_path=db)
    sink = Collector()
    rt.set_sink(sink)
    return rt, sink


async def test_a_container_lanes_tool_calls_run_in_its_container(
    server: ReplayServer, lane_repo: Path, tmp_path: Path, docker_engine: Engine
) -> None:
    rt, sink = await runtime(server, lane_repo, tmp_path / "db.sqlite", docker_engine)
    try:
        view = await rt.new_session("api", lane=True, on="container")
        lane = await rt.store.lanes.of_session(view.id)
        assert lane is not None and lane.backend == "container" and view.lane_where is not None
        assert view.lane_where.startswith("container paragents-") and "container" in view.lane_notes[0]
        sink.answers.extend([PermissionAnswer("allow_once")] * 8)
        server.add(
            call("write_file", path="calc.py", content="def add(a, b):\n    return a + b\n"), session="api"
        )
        server.add(
            call(
                "run_command",
                "c2",
                command="pwd; echo $PORT; python3 -c 'import calc; print(calc.add(2, 3))' | tee out.txt",
            ),
            session="api",
        )
        server.add(call("read_file", "c3", path="out.txt"), session="api")
        server.add(call("read_file", "c4", path="/etc/hostname"), session="api")
        server.add(reply("done"), session="api")
        rt.submit(view.id, "add and run")
        await rt.wait_idle(view.id)
        results = [e.output for e in sink.of(ev.ToolCallFinished, view.id)]
        assert results[1].splitlines()[:3] == ["/workspace", str(lane.port_base), "5"]
        assert "5" in results[2] and "outside the lane" in results[3]
        name = f"paragents-{project_hash(lane_repo)}-api"
        assert docker(docker_engine, "exec", name, "cat", "/workspace/out.txt") == "5"
        assert not (lane_repo / "calc.py").exists()  # the user's checkout is untouched
        await rt.lane_watcher.run_round()  # a round fetches the lane's snapshot into its worktree here
        assert (Path(lane.path) / "out.txt").read_text() == "5\n"
        assert "calc.py" in git(Path(lane.path), "status", "--porcelain")
    finally:
        await rt.shutdown()


async def test_prediction_over_container_lanes_and_gc_after_fetch(
    server: ReplayServer, lane_repo: Path, tmp_path: Path, docker_engine: Engine
) -> None:
    rt, sink = await runtime(server, lane_repo, tmp_path / "db.sqlite", docker_engine)
    try:
        views = [await rt.new_session(n, lane=True, on="container") for n in ("one", "two")]
        sink.answers.extend([PermissionAnswer("allow_once")] * 8)
        for view, body in zip(views, ("a + b", "b + a"), strict=True):
            new = f"def add(a, b):\n    return {body}\n"
            server.add(call("write_file", path="app.py", content=new), session=view.name)
            server.add(reply("ok"), session=view.name)
            rt.submit(view.id, "fix add")
        for view in views:
            await rt.wait_idle(view.id)
        conflicts = await rt.lane_watcher.run_round()
        assert [(c.a, c.b, c.files) for c in conflicts] == [("one", "two", ("app.py",))]
        await sink.wait_for(lambda: any(e.conflicts for e in sink.of(ev.LaneConflictsChanged, views[0].id)))
        # gc keeps both (open sessions, uncommitted work); closed and with --force it bundles, then removes
        for view in views:
            await rt.close_session(view.id)
        kept = await gc(rt.store, lane_repo, apply=True)
        assert all(d.action == "keep" and d.holds_work for d in kept)
        mine = f"label=dev.paragents.repo={project_hash(lane_repo)}"
        assert len(docker(docker_engine, "ps", "-aq", "--filter", mine).split()) == 2
        done = await gc(rt.store, lane_repo, apply=True, force=True)
        assert [d.action for d in done] == ["removed", "removed"] and all(d.bundle for d in done)
        assert docker(docker_engine, "ps", "-aq", "--filter", mine) == ""
        bundle = done[0].bundle
        assert bundle is not None and "a + b" in subprocess.run(
            ["git", "bundle", "list-heads", bundle], capture_output=True, text=True
        ).stdout + git(lane_repo, "show", "refs/paragents/recovery/one:app.py")
    finally:
        await rt.shutdown()


async def test_a_lost_engine_pauses_the_session_and_it_resumes(
    server: ReplayServer, lane_repo: Path, tmp_path: Path, docker_engine: Engine
) -> None:
    proxy = EngineProxy(docker_engine.host, Path("/tmp") / f"pgs-{tmp_path.name[-12:]}.sock")
    await proxy.open()
    rt, sink = await runtime(server, lane_repo, tmp_path / "db.sqlite", docker_engine, host=proxy.host)
    try:
        view = await rt.new_session("api", lane=True, on="container")
        remote = rt.remote.get(await rt.store.lanes.of_session(view.id))  # type: ignore[arg-type]
        assert remote is not None
        remote.probe_first = remote.probe_max = 0.2
        gate = asyncio.Event()
        sink.answers.extend([PermissionAnswer("allow_once")] * 8)
        server.add(call("write_file", path="kept.txt", content="fetched\n"), session="api")
        first = call("run_command", "c2", command="cat kept.txt")

        async def wait_gate(i: int) -> None:
            if i == 0:
                await gate.wait()

        first.before_read = wait_gate
        server.add(first, session="api")
        server.add(call("run_command", "c3", command="cat kept.txt"), session="api")
        server.add(reply("done"), session="api")
        rt.submit(view.id, "go")
        await sink.wait_for(lambda: len(sink.of(ev.ToolCallFinished, view.id)) == 1)
        await rt.lane_watcher.run_round()
        await proxy.close()  # the engine goes away while the model thinks
        gate.set()
        await sink.wait_for(lambda: view.state is SessionState.PAUSED)
        failed = sink.of(ev.ToolCallFinished, view.id)[1]
        assert failed.status == "error" and "unreachable" in failed.output
        notes = [n.text for n in sink.of(ev.Notice, view.id)]
        assert any("pauses before its next request" in n for n in notes)
        assert view.lane_state == "unreachable"
        await asyncio.sleep(0.6)  # probes keep failing meanwhile: still paused, nothing lost
        assert view.state is SessionState.PAUSED
        await proxy.open()
        await rt.wait_idle(view.id)
        assert view.lane_state == "ready" and view.last_result is not None
        assert view.last_result.status.value == "completed"
        last = sink.of(ev.ToolCallFinished, view.id)[2]
        assert last.status == "ok" and "fetched" in last.output
    finally:
        await rt.shutdown()
        await proxy.close()


async def test_on_needs_a_lane_and_a_known_backend(
    server: ReplayServer, lane_repo: Path, tmp_path: Path, docker_engine: Engine
) -> None:
    rt, _ = await runtime(server, lane_repo, tmp_path / "db.sqlite", docker_engine)
    try:
        with pytest.raises(SessionError, match="give --lane too"):
            await rt.new_session("x", on="container")
        with pytest.raises(SessionError, match="use local, container"):
            await rt.new_session("x", lane=True, on="mainframe")
        assert await rt.store.lanes.all() == []
    finally:
        await rt.shutdown()


async def test_a_lanes_dev_server_answers_on_its_forwarded_port(
    server: ReplayServer, lane_repo: Path, tmp_path: Path, docker_engine: Engine
) -> None:
    import httpx

    rt, sink = await runtime(server, lane_repo, tmp_path / "db.sqlite", docker_engine)
    try:
        view = await rt.new_session("web", lane=True, on="container")
        lane = await rt.store.lanes.of_session(view.id)
        assert lane is not None
        forwards = rt.remote.forwards[(lane.repo, lane.name)]
        if lane.port_base not in forwards.servers:
            pytest.skip(f"port {lane.port_base} is in use on this machine")
        sink.answers.extend([PermissionAnswer("allow_once")] * 4)
        start = "mkdir -p site && echo hello-from-the-lane > site/index.html && cd site && "
        start += "(python3 -m http.server $PORT --bind 127.0.0.1 > /dev/null 2>&1 &) && sleep 1 && echo up"
        server.add(call("run_command", command=start), session="web")
        server.add(reply("serving"), session="web")
        rt.submit(view.id, "serve the site")
        await rt.wait_idle(view.id)
        assert "up" in sink.of(ev.ToolCallFinished, view.id)[0].output
        async with httpx.AsyncClient() as client:
            got = await client.get(f"http://127.0.0.1:{lane.port_base}/index.html", timeout=30)
        assert got.status_code == 200 and got.text == "hello-from-the-lane\n"
        assert forwards.connections >= 1
        nothing = lane.port_base + 1  # nothing listens there in the lane: the connection just closes
        async with httpx.AsyncClient() as client:
            with pytest.raises(httpx.HTTPError):
                await client.get(f"http://127.0.0.1:{nothing}/", timeout=30)
    finally:
        await rt.shutdown()


async def test_after_a_restart_with_the_engine_away_the_lane_pauses_never_runs_here(
    server: ReplayServer, lane_repo: Path, tmp_path: Path, docker_engine: Engine
) -> None:
    proxy = EngineProxy(docker_engine.host, Path("/tmp") / f"pgr-{tmp_path.name[-12:]}.sock")
    await proxy.open()
    db = tmp_path / "db.sqlite"
    rt, _ = await runtime(server, lane_repo, db, docker_engine, host=proxy.host)
    view = await rt.new_session("api", lane=True, on="container")
    lane = await rt.store.lanes.of_session(view.id)
    assert lane is not None
    await rt.shutdown()
    await proxy.close()  # the engine does not answer when paragents starts again
    again, sink = await runtime(server, lane_repo, db, docker_engine, host=proxy.host)
    try:
        [restored] = await again.restore()
        assert restored.lane == "api" and restored.lane_where is not None
        sink.answers.extend([PermissionAnswer("allow_once")] * 4)
        server.add(call("run_command", command="echo made > where.txt && hostname"), session="api")
        server.add(reply("done"), session="api")
        again.submit(restored.id, "go")
        await sink.wait_for(lambda: restored.state is SessionState.PAUSED)
        assert restored.lane_state == "unreachable"
        assert any("could not be reached" in n.text for n in sink.of(ev.Notice, restored.id))
        await proxy.open()
        await again.wait_idle(restored.id)
        done = sink.of(ev.ToolCallFinished, restored.id)
        assert done[0].status == "ok" and restored.lane_state == "ready"
        assert not (Path(lane.path) / "where.txt").exists()  # it ran in the container, not here
        name = f"paragents-{project_hash(lane_repo)}-api"
        assert docker(docker_engine, "exec", name, "cat", "/workspace/where.txt") == "made"
    finally:
        await again.shutdown()
        await proxy.close()
