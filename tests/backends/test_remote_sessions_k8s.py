"""A session in a ``kubernetes`` lane (``--on k8s``) against the loopback API server
(tests/backends/kube_server.py: the real protocol, not a cluster; docs/remote.md says what that proves):
its tool calls go through the exec websocket, a round mirrors its snapshot, gc deletes the Pod only
after fetching its work."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from paragents import events as ev
from paragents.events import PermissionAnswer
from paragents.lanes.gc import gc
from paragents.llm.replay import ReplayServer, ScriptedResponse
from paragents.sessions import Runtime
from tests.backends.engine import git
from tests.backends.kube_server import LoopbackApiServer
from tests.runtime_env import Collector

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="the loopback server runs pods with bwrap"
)


def call(name: str, cid: str, **args: object) -> ScriptedResponse:
    return ScriptedResponse.from_message(
        tool_calls=[{"id": cid, "name": name, "arguments": json.dumps(args)}]
    )


@pytest.fixture
async def api() -> AsyncIterator[LoopbackApiServer]:
    server = LoopbackApiServer("loopback-token-ab12")
    await server.start()
    yield server
    await server.close()


async def test_a_pod_lanes_session_works_there_and_gc_fetches_before_deleting(
    api: LoopbackApiServer, lane_repo: Path, tmp_path: Path
) -> None:
    kubeconfig = api.kubeconfig(tmp_path / "kubeconfig")
    async with ReplayServer(models=["m"]) as server:
        lanes: dict[str, Any] = {"image": "lane-image:1", "kubernetes": {"kubeconfig": str(kubeconfig)}}
        cfg = {"base_url": server.base_url, "model": "m", "max_retries": 0, "sandbox": "off", "lanes": lanes}
        rt = await Runtime.create(lane_repo, cli_overrides=cfg, db_path=tmp_path / "db.sqlite")
        sink = Collector()
        rt.set_sink(sink)
        try:
            view = await rt.new_session("gpu", lane=True, on="k8s")
            assert view.lane_where is not None and view.lane_where.startswith("pod lanes/paragents-")
            sink.answers.extend([PermissionAnswer("allow_once")] * 6)
            server.add(call("write_file", "c1", path="model.py", content="W = 3\n"), session="gpu")
            server.add(call("run_command", "c2", command="pwd; cat model.py; echo $PORT"), session="gpu")
            server.add(call("grep", "c3", pattern="W ="), session="gpu")
            server.add(ScriptedResponse.from_message(content="done"), session="gpu")
            rt.submit(view.id, "write the model")
            await rt.wait_idle(view.id)
            out = [e.output for e in sink.of(ev.ToolCallFinished, view.id)]
            lane = await rt.store.lanes.of_session(view.id)
            assert lane is not None
            assert out[1].splitlines()[:3] == ["/workspace", "W = 3", str(lane.port_base)]
            assert "model.py:1: W = 3" in out[2]
            assert not (Path(lane.path) / "model.py").exists()  # only in the Pod until a round
            await rt.lane_watcher.run_round()
            assert (Path(lane.path) / "model.py").read_text() == "W = 3\n"
            await rt.close_session(view.id)
            [kept] = await gc(rt.store, lane_repo, apply=True)
            assert kept.action == "keep" and kept.holds_work and api.pods
            [done] = await gc(rt.store, lane_repo, apply=True, force=True)
            assert done.action == "removed" and done.bundle and not api.pods
            assert git(lane_repo, "show", "refs/paragents/recovery/gpu:model.py") == "W = 3"
        finally:
            await rt.shutdown()
