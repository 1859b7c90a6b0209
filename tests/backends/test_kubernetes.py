"""The kubernetes backend against a loopback API server (tests/backends/kube_server.py). That server
speaks the real protocol the client uses (REST, watch, the exec websocket's channel protocol); it is
not a cluster, and nothing here says what a real cluster does (docs/remote.md)."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from paragents.backend_settings import KubernetesSettings
from paragents.backends import BackendError, BackendUnreachable, LaneGone, LaneSpec
from paragents.backends.kubernetes import KubernetesBackend
from tests.backends.engine import git
from tests.backends.kube_server import LoopbackApiServer

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="the loopback server runs pods with bwrap"
)
TOKEN = "loopback-token-7f3a"


@pytest.fixture
async def server() -> AsyncIterator[LoopbackApiServer]:
    api = LoopbackApiServer(TOKEN)
    await api.start()
    yield api
    await api.close()


async def _lane(
    server: LoopbackApiServer, repo: Path, tmp_path: Path, **settings: object
) -> KubernetesBackend:
    kubeconfig = server.kubeconfig(tmp_path / "kubeconfig")
    spec = LaneSpec(repo=repo, name="K1", base_commit=git(repo, "rev-parse", "HEAD"), env={"PORT": "41000"})
    return KubernetesBackend(
        spec,
        KubernetesSettings(kubeconfig=str(kubeconfig), node_selector={"gpu": "true"}, **settings),
        "lane-image:1",
    )


async def test_pod_lane_exec_files_and_snapshot(
    server: LoopbackApiServer, lane_repo: Path, tmp_path: Path
) -> None:
    lane = await _lane(server, lane_repo, tmp_path)
    try:
        await lane.create()
        pod = server.pods[("lanes", lane.name)]
        spec = pod["spec"]
        assert spec["automountServiceAccountToken"] is False and spec["enableServiceLinks"] is False
        assert spec["securityContext"]["runAsNonRoot"] and spec["securityContext"]["runAsUser"] == 1000
        container = spec["containers"][0]
        assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
        assert container["resources"]["limits"] == {"cpu": "2", "memory": "4Gi"}
        assert spec["nodeSelector"] == {"gpu": "true"}
        assert TOKEN not in str(pod)
        assert ("lanes", "paragents-lanes-deny-all") in server.policies
        result = await lane.exec("echo $PORT; pwd; git log --oneline | wc -l; exit 4")
        assert result.code == 4 and result.output.split() == ["41000", "/workspace", "1"]
        assert server.exec_protocols[-1] == "v5.channel.k8s.io"
        await lane.write_file("src/x.py", b"print('x')\n")
        assert await lane.read_file("src/x.py") == b"print('x')\n"
        assert (await lane.exec("git add -A && git commit -qm 'k8s work' && echo ok")).ok
        await lane.write_file("wip.txt", b"wip\n")
        snap = await lane.snapshot()
        assert git(lane_repo, "show", f"{snap.commit}:wip.txt") == "wip"
        assert git(lane_repo, "log", "-1", "--format=%s", snap.head) == "k8s work"
        timed = await lane.exec("sleep 600", timeout=1)
        assert timed.timed_out
    finally:
        await lane.destroy(force=True)
        await lane.close()
    assert ("lanes", lane.name) not in server.pods


async def test_evicted_pod_is_recreated_from_the_last_snapshot(
    server: LoopbackApiServer, lane_repo: Path, tmp_path: Path
) -> None:
    lane = await _lane(server, lane_repo, tmp_path)
    try:
        await lane.create()
        await lane.write_file("kept.txt", b"kept\n")
        snap = await lane.snapshot()
        server.delete_pod("lanes", lane.name)
        with pytest.raises(LaneGone):
            await lane.exec("true")
        note = await lane.recover()
        assert note is not None and snap.commit[:12] in note
        assert await lane.read_file("kept.txt") == b"kept\n"
    finally:
        await lane.destroy(force=True)
        await lane.close()


async def test_api_server_gone_makes_the_lane_unreachable(
    server: LoopbackApiServer, lane_repo: Path, tmp_path: Path
) -> None:
    lane = await _lane(server, lane_repo, tmp_path)
    try:
        await lane.create()
        snap = await lane.snapshot()
        port = server.port
        await server.stop()
        with pytest.raises(BackendUnreachable, match="API server did not answer"):
            await lane.exec("true")
        assert (await lane.health()).state == "unreachable"
        with pytest.raises(BackendUnreachable):
            await lane.destroy()
        assert git(lane_repo, "rev-parse", lane.spec.snapshot_ref) == snap.commit
        await server.start(port)
        assert (await lane.health()).state == "running"
        assert (await lane.exec("true")).ok
    finally:
        await lane.destroy(force=True)
        await lane.close()


async def test_agent_sandbox_resource_when_the_crd_is_installed(lane_repo: Path, tmp_path: Path) -> None:
    server = LoopbackApiServer(TOKEN, sandbox_crd=True)
    await server.start()
    lane = await _lane(server, lane_repo, tmp_path)
    try:
        await lane.create()
        assert lane.uses_sandbox and ("lanes", lane.name) in server.sandboxes
        template = server.sandboxes[("lanes", lane.name)]["spec"]["podTemplate"]["spec"]
        assert template["automountServiceAccountToken"] is False
        assert (await lane.exec("echo in-sandbox")).output.strip() == "in-sandbox"
        await lane.destroy()
        assert ("lanes", lane.name) not in server.sandboxes and ("lanes", lane.name) not in server.pods
    finally:
        await lane.close()
        await server.close()


async def test_required_crd_missing_and_bad_token_are_clear_errors(
    server: LoopbackApiServer, lane_repo: Path, tmp_path: Path
) -> None:
    lane = await _lane(server, lane_repo, tmp_path, sandbox_crd="required")
    try:
        with pytest.raises(BackendError, match="sandbox_crd is 'required'"):
            await lane.create()
    finally:
        await lane.close()
    lane = await _lane(server, lane_repo, tmp_path)
    server.token = "rotated"  # the kubeconfig's token no longer works
    try:
        with pytest.raises(BackendError, match="refused"):
            await lane.create()
    finally:
        await lane.close()
