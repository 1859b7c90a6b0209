"""Lane ports as ``port:N`` reservations: a command that names another lane's port is held by the
conflict checker, which names the lane's session; the lane's own session uses its ports freely; the
reservations outlive turns and go with the lane."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from paragents import events as ev
from paragents.conflicts.ports import command_ports
from paragents.conflicts.targets import call_targets
from paragents.events import PermissionAnswer
from paragents.lanes.gc import remove_lane
from paragents.llm.replay import ReplayServer, ScriptedResponse
from paragents.sessions import Runtime
from tests.runtime_env import Collector


@pytest.mark.parametrize(
    ("command", "ports"),
    [
        ("uvicorn app:app --port 41003", (41003,)),
        ("vite --port=5173 --host", (5173,)),
        ("flask run -p 8001", (8001,)),
        ("docker run -p 41005:80 nginx", (41005,)),
        ("PORT=3000 npm start", (3000,)),
        ("env DEV_PORT=3001 node server.js", (3001,)),
        ("python -m http.server 41002", (41002,)),
        ("curl -s http://localhost:41007/health && curl 127.0.0.1:9000", (41007, 9000)),
        ("gunicorn -b 0.0.0.0:8080 app:app", (8080,)),
        ("mkdir -p build && ls -la", ()),
        ("git log -p -3", ()),
        ("echo $PORT", ()),
    ],
)
def test_ports_named_by_a_command(command: str, ports: tuple[int, ...]) -> None:
    assert command_ports(command) == ports


def test_a_command_naming_a_port_is_checked_but_writes_nothing(tmp_path: Path) -> None:
    targets = call_targets("run_command", {"command": "python -m http.server 41002"}, tmp_path)
    assert targets.ports == (41002,) and not targets.paths and not targets.empty


def reply(content: str = "", **kw: object) -> ScriptedResponse:
    return ScriptedResponse.from_message(content=content, **kw)  # type: ignore[arg-type]


@pytest.fixture
async def server() -> AsyncIterator[ReplayServer]:
    async with ReplayServer(models=["m"]) as replay:
        yield replay


async def _run(server: ReplayServer, rt: Runtime, sink: Collector, sid: str, command: str) -> None:
    name = rt.sessions[sid].name
    sink.answers.append(PermissionAnswer("allow_once"))
    args = json.dumps({"command": command})
    server.add(reply(tool_calls=[{"id": "c", "name": "run_command", "arguments": args}]), session=name)
    server.add(reply("done"), session=name)
    rt.submit(sid, f"run {command}")


async def test_binding_another_lanes_port_names_its_holder(
    server: ReplayServer, repo: Path, tmp_path: Path
) -> None:
    cfg = {"base_url": server.base_url, "model": "m", "max_retries": 0, "sandbox": "off"}
    rt = await Runtime.create(repo, cli_overrides=cfg, db_path=tmp_path / "db.sqlite")
    sink = Collector()
    rt.set_sink(sink)
    try:
        api = await rt.new_session("api", lane=True)
        other = await rt.new_session("other")
        lane = await rt.store.lanes.of_session(api.id)
        assert lane is not None
        held = [r for r in await rt.store.reservations.all() if r.kind == "port"]
        assert sorted(r.path for r in held) == sorted(f"port:{lane.port_base + i}" for i in range(10))
        assert {r.session_id for r in held} == {api.id}

        await _run(
            server, rt, sink, api.id, f"echo serving on {lane.port_base + 3} --port {lane.port_base + 3}"
        )
        await rt.wait_idle(api.id)  # its own port: no conflict; its turn ended
        assert not sink.of(ev.ConflictDetected)
        assert len([r for r in await rt.store.reservations.all() if r.kind == "port"]) == 10

        await _run(server, rt, sink, other.id, f"python -m http.server {lane.port_base + 3}")
        await sink.wait_for(lambda: bool(sink.of(ev.ConflictDetected, other.id)))
        [shown] = sink.of(ev.ConflictDetected, other.id)
        assert shown.holder == "api" and shown.path == f"port:{lane.port_base + 3}"
        assert shown.holder_reason == f"lane api's ports {lane.port_base}-{lane.port_base + 9}"
        shown.reply.set_result("skip")
        await rt.wait_idle(other.id)
        [result] = [e for e in sink.of(ev.ToolCallFinished, other.id)]
        assert f"port {lane.port_base + 3} belongs to session 'api'" in result.output

        ports = f"ports {lane.port_base}-{lane.port_base + 9}"
        [line] = await rt.lane_overview()
        assert line.startswith("api") and f"{ports}  session api" in line
        await rt.close_session(api.id)  # a leftover lane keeps its ports, and the overview shows it
        assert len([r for r in await rt.store.reservations.all() if r.kind == "port"]) == 10
        [line] = await rt.lane_overview()
        assert f"{ports}  leftover: no open session" in line
        await remove_lane(rt.store.lanes, repo, lane, force=True)
        assert not [r for r in await rt.store.reservations.all() if r.kind == "port"]
    finally:
        await rt.shutdown()
