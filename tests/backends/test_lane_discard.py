"""A discarded (or closed) remote lane is never made again (backends/lane.py): a prediction round's
sync still in flight when the lane's Pod or container is removed meets the removed place and fails;
it does not recover it. Once seen under load in tests/eval/test_k8s_run.py (a round's late sync
recreated the trial's Pod after its lane was discarded). Here the interleaving is made certain: the
round's sync is held before its snapshot until the discard ran, against the loopback API server
(tests/backends/kube_server.py) and a real Docker Engine."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from paragents.backend_settings import ContainerSettings, KubernetesSettings
from paragents.backends import BackendUnreachable, LaneGone, LaneSpec, Snapshot
from paragents.backends.container import ContainerBackend
from paragents.backends.kubernetes import KubernetesBackend
from paragents.backends.lane import RemoteLane
from paragents.backends.rounds import RoundSync, RoundSyncer
from tests.backends.engine import Engine, git
from tests.backends.kube_server import LoopbackApiServer


class Held:
    """Holds the next snapshot (a round's sync) at ``entered`` until ``go`` is set."""

    def __init__(self) -> None:
        self.armed = False
        self.entered = asyncio.Event()
        self.go = asyncio.Event()

    async def wait(self) -> None:
        if self.armed:
            self.armed = False
            self.entered.set()
            await self.go.wait()


class HeldPod(KubernetesBackend):
    held: Held

    async def snapshot(self, *, known: list[str] | None = None) -> Snapshot:
        await self.held.wait()
        return await super().snapshot(known=known)


class HeldContainer(ContainerBackend):
    held: Held

    async def snapshot(self, *, known: list[str] | None = None) -> Snapshot:
        await self.held.wait()
        return await super().snapshot(known=known)


def spec_of(repo: Path, tmp_path: Path, name: str) -> LaneSpec:
    worktree = tmp_path / "lanes" / name
    git(repo, "worktree", "add", "-q", "-b", f"paragents/{name}", str(worktree))
    return LaneSpec(repo, name, git(repo, "rev-parse", "HEAD"), worktree=worktree)


async def end_while_a_round_syncs(
    lane: RemoteLane, held: Held, end: Callable[[], Awaitable[object]]
) -> RoundSync:
    """A round starts syncing ``lane`` and is held before its snapshot; ``end`` removes the lane's
    place; then the round goes on and meets the removed place: it fails, nothing is recreated."""
    held.armed = True
    syncer = RoundSyncer(wait=600)
    round_ = asyncio.create_task(syncer.sync([lane]))
    await held.entered.wait()
    await end()
    held.go.set()
    done = await round_
    await syncer.close()
    return done


def failed_as_gone(done: RoundSync, name: str) -> bool:
    """The round says the lane's place is gone and is not made again (it synced nothing of it)."""
    failed = done.failed.get(name)
    return isinstance(failed, LaneGone) and "is not made again" in str(failed) and name not in done.trees


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="the loopback server runs pods with bwrap")
@pytest.mark.parametrize("close_first", [False, True], ids=["discarded", "closed-then-removed"])
async def test_a_round_in_flight_never_recreates_a_discarded_lanes_pod(
    lane_repo: Path, tmp_path: Path, close_first: bool
) -> None:
    api = LoopbackApiServer("loopback-token-d15c")
    await api.start()
    settings = KubernetesSettings(kubeconfig=str(api.kubeconfig(tmp_path / "kubeconfig")))
    spec = spec_of(lane_repo, tmp_path, "gone1")
    backend = HeldPod(spec, settings, "lane-image:1")
    backend.held = Held()
    lane = RemoteLane(backend, spec.worktree or tmp_path)
    other = KubernetesBackend(spec, settings, "lane-image:1")
    try:
        await backend.create()
        assert api.pods

        async def closed_then_removed() -> None:  # as `lanes gc` from a shell does, in its own opening
            await lane.close()
            await other.destroy(force=True)

        end = closed_then_removed if close_first else lambda: lane.discard(force=True)
        done = await end_while_a_round_syncs(lane, backend.held, end)
        assert not api.pods  # not recreated
        assert [p for (m, p) in api.requests if m == "POST" and p.endswith("/pods")] == [
            "/api/v1/namespaces/lanes/pods"
        ]
        assert failed_as_gone(done, lane.name), done
    finally:
        await lane.close()
        await other.destroy(force=True)
        await other.close()
        await api.close()


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="the loopback server runs pods with bwrap")
async def test_a_discard_refused_leaves_the_lane_in_use(lane_repo: Path, tmp_path: Path) -> None:
    """Without ``force`` the work is fetched first; when the cluster does not answer the discard is
    refused and the lane stays what it was (it may recover again once the cluster answers)."""
    api = LoopbackApiServer("loopback-token-d15d")
    await api.start()
    settings = KubernetesSettings(kubeconfig=str(api.kubeconfig(tmp_path / "kubeconfig")))
    spec = spec_of(lane_repo, tmp_path, "kept1")
    backend = KubernetesBackend(spec, settings, "lane-image:1")
    lane = RemoteLane(backend, spec.worktree or tmp_path, probe_first=3600)
    try:
        await backend.create()
        port = api.port
        await api.stop()
        with pytest.raises(BackendUnreachable):
            await lane.discard()
        assert lane.ended is None and lane.state == "unreachable"
        await api.start(port)
        assert await lane._recover_now() is None  # still allowed: the Pod runs
        assert api.pods
    finally:
        await lane.discard(force=True)
        await lane.close()
        await api.close()


def containers(engine: Engine, name: str) -> list[str]:
    out = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"name=^{name}$"],
        env={"DOCKER_HOST": engine.host, "PATH": "/usr/local/bin:/usr/bin:/bin"},
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return out.split()


async def test_a_round_in_flight_never_recreates_a_discarded_lanes_container(
    docker_engine: Engine, lane_repo: Path, tmp_path: Path
) -> None:
    spec = spec_of(lane_repo, tmp_path, "gone2")
    backend = HeldContainer(spec, ContainerSettings(host=docker_engine.host), docker_engine.image)
    backend.held = Held()
    lane = RemoteLane(backend, spec.worktree or tmp_path)
    try:
        await backend.create()
        assert containers(docker_engine, backend.name)
        done = await end_while_a_round_syncs(lane, backend.held, lambda: lane.discard(force=True))
        assert not containers(docker_engine, backend.name)  # not recreated
        assert failed_as_gone(done, lane.name), done
    finally:
        await lane.close()
        await backend._remove()
        await backend.close()
