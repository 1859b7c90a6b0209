"""The container backend against a real Docker Engine (tests/backends/conftest.py starts one) and the
offline lane image: commands, files, snapshots fetched as bundles, faults and recovery."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from paragents.backend_settings import ContainerSettings
from paragents.backends import BackendError, BackendUnreachable, LaneGone, LaneSpec, open_backend
from paragents.backends.container import LABEL, ContainerBackend
from tests.backends.dockerproxy import EngineProxy
from tests.backends.engine import Engine, git

Make = Callable[..., "asyncio.Future[ContainerBackend]"]


@pytest.fixture
async def make_lane(docker_engine: Engine, lane_repo: Path) -> AsyncIterator[Callable[..., object]]:
    made: list[ContainerBackend] = []

    async def make(name: str = "l1", host: str | None = None, **settings: object) -> ContainerBackend:
        spec = LaneSpec(
            repo=lane_repo, name=name, base_commit=git(lane_repo, "rev-parse", "HEAD"), env={"PORT": "41000"}
        )
        backend = ContainerBackend(
            spec,
            ContainerSettings(host=host or docker_engine.host, **settings),
            docker_engine.image,
        )
        made.append(backend)
        await backend.create()
        return backend

    yield make
    for backend in made:  # remove the containers through the engine itself (not a proxy a test cut)
        await backend.close()
        backend.settings = ContainerSettings(host=docker_engine.host)
        await backend._remove()
        await backend.close()


def docker(engine: Engine, *args: str) -> str:
    return subprocess.run(
        ["docker", *args], env={"DOCKER_HOST": engine.host, "PATH": "/usr/local/bin:/usr/bin:/bin"},
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip


async def test_exec_output_exit_code_cwd_and_env(make_lane: Callable[..., object]) -> None:
    lane: ContainerBackend = await make_lane()  # type: ignore[misc]
    result = await lane.exec("echo out; echo err >&2; pwd; echo $PORT; exit 3")
    assert result.code == 3 and not result.ok
    assert result.output.splitlines() == ["out", "err", "/workspace", "41000"]
    assert (await lane.exec("mkdir -p sub/dir")).ok
    assert (await lane.exec("pwd", cwd="sub/dir")).output.strip() == "/workspace/sub/dir"
    missing = await lane.exec("pwd", cwd="nope")
    assert missing.code == 125 and "nope" in missing.output
    with pytest.raises(BackendError, match="leaves the lane"):
        await lane.exec("pwd", cwd="../etc")


async def test_output_streams_while_the_command_runs(make_lane: Callable[..., object]) -> None:
    lane: ContainerBackend = await make_lane()  # type: ignore[misc]
    seen = asyncio.Event()

    def sink(chunk: bytes) -> None:
        if b"ready" in chunk:
            seen.set()

    # The command cannot finish before the test has seen "ready" and written the file it waits for.
    run = asyncio.create_task(
        lane.exec(
            "echo ready; while [ ! -e go ]; do sleep 0.05; done; echo finished", on_output=sink, timeout=60
        )
    )
    await asyncio.wait_for(seen.wait(), 30)
    assert not run.done()
    await lane.write_file("go", b"")
    result = await run
    assert result.ok and result.output.split() == ["ready", "finished"]


async def _processes(lane: ContainerBackend, pattern: str) -> int:
    """Processes whose command line matches ``pattern`` (write it so it does not match itself)."""
    out = await lane.exec(f"grep -l -a -e '{pattern}' /proc/[0-9]*/cmdline 2>/dev/null | wc -l")
    return int(out.output.strip())


async def test_timeout_stops_the_whole_process_group(make_lane: Callable[..., object]) -> None:
    lane: ContainerBackend = await make_lane()  # type: ignore[misc]
    result = await lane.exec("sleep 600 & sleep 601; echo never", timeout=1)
    assert result.timed_out and result.code != 0 and "never" not in result.output
    assert await _processes(lane, "sleep 60[01]") == 0


async def test_cancel_stops_the_command_and_reraises(make_lane: Callable[..., object]) -> None:
    lane: ContainerBackend = await make_lane()  # type: ignore[misc]
    started = asyncio.Event()
    run = asyncio.create_task(lane.exec("echo up; sleep 602", on_output=lambda c: started.set(), timeout=600))
    await asyncio.wait_for(started.wait(), 30)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert await _processes(lane, "sleep 60[2]") == 0


async def test_files_round_trip_and_stay_in_the_lane(make_lane: Callable[..., object]) -> None:
    lane: ContainerBackend = await make_lane()  # type: ignore[misc]
    data = bytes(range(256)) * 1000
    await lane.write_file("deep/er/blob.bin", data)
    assert await lane.read_file("deep/er/blob.bin") == data
    names = {(e.name, e.kind) for e in await lane.list_dir(".")}
    assert {("app.py", "f"), ("deep", "d"), (".git", "d")} <= names
    assert (await lane.read_file("app.py")).startswith(b"def add")
    with pytest.raises(BackendError, match="does not exist"):
        await lane.read_file("missing.txt")
    with pytest.raises(BackendError, match="larger than"):
        await lane.read_file("deep/er/blob.bin", limit=10)
    for bad in ("/etc/passwd", "../x", "a/../../x"):
        with pytest.raises(BackendError):
            await lane.write_file(bad, b"x")


async def test_snapshot_brings_commits_and_uncommitted_files_back(
    make_lane: Callable[..., object], lane_repo: Path
) -> None:
    lane: ContainerBackend = await make_lane()  # type: ignore[misc]
    await lane.write_file("app.py", b"def add(a, b):\n    return a + b\n")
    assert (await lane.exec("git commit -qam 'fix add' && echo ok")).ok
    await lane.write_file("notes.txt", b"untracked\n")
    await lane.write_file("build/out.o", b"ignored\n")
    snap = await lane.snapshot()
    assert snap.changed and snap.transferred > 0
    assert git(lane_repo, "rev-parse", lane.spec.snapshot_ref) == snap.commit
    assert git(lane_repo, "log", "-1", "--format=%s", snap.head) == "fix add"
    files = set(git(lane_repo, "ls-tree", "-r", "--name-only", snap.commit).split())
    assert files == {".gitignore", "README.md", "app.py", "notes.txt"}
    assert "return a + b" in git(lane_repo, "show", f"{snap.commit}:app.py")
    again = await lane.snapshot()
    assert again.commit == snap.commit and not again.changed and again.transferred == 0
    await lane.write_file("notes.txt", b"changed\n")
    third = await lane.snapshot()
    assert third.changed and 0 < third.transferred < snap.transferred + 4096
    assert git(lane_repo, "show", f"{third.commit}:notes.txt") == "changed"
    assert snap.commit in git(lane_repo, "reflog", "show", "--format=%H", lane.spec.snapshot_ref).split()


async def test_deleted_container_is_recreated_from_the_last_snapshot(
    make_lane: Callable[..., object], docker_engine: Engine
) -> None:
    lane: ContainerBackend = await make_lane()  # type: ignore[misc]
    await lane.write_file("kept.txt", b"fetched\n")
    assert (await lane.exec("git add kept.txt && git commit -qm kept")).ok
    await lane.write_file("wip.txt", b"uncommitted\n")
    snap = await lane.snapshot()
    await lane.write_file("lost.txt", b"never fetched\n")
    docker(docker_engine, "rm", "-f", lane.name)
    with pytest.raises(LaneGone, match="recover"):
        await lane.exec("true")
    assert (await lane.health()).state == "missing"
    note = await lane.recover()
    assert note is not None and snap.commit[:12] in note and "lost" in note
    assert (await lane.read_file("wip.txt")) == b"uncommitted\n"
    assert (await lane.exec("git log -1 --format=%s")).output.strip() == "kept"
    assert (await lane.exec("git status --porcelain")).output.split() == ["??", "wip.txt"]
    with pytest.raises(BackendError, match="does not exist"):
        await lane.read_file("lost.txt")


async def test_stopped_container_is_started_again_with_its_files(
    make_lane: Callable[..., object], docker_engine: Engine
) -> None:
    lane: ContainerBackend = await make_lane()  # type: ignore[misc]
    await lane.write_file("unsnapshotted.txt", b"still here\n")
    docker(docker_engine, "stop", "-t", "1", lane.name)
    assert (await lane.health()).state == "stopped"
    note = await lane.recover()
    assert note is not None and "started again" in note
    assert await lane.read_file("unsnapshotted.txt") == b"still here\n"


async def test_lost_connection_makes_the_lane_unreachable_and_nothing_fetched_is_lost(
    make_lane: Callable[..., object], docker_engine: Engine, lane_repo: Path, tmp_path: Path
) -> None:
    proxy = EngineProxy(docker_engine.host, Path("/tmp") / f"pgp-{tmp_path.name[-12:]}.sock")
    await proxy.open()
    try:
        lane: ContainerBackend = await make_lane(host=proxy.host, connect_timeout=2)  # type: ignore[misc]
        await lane.write_file("a.txt", b"fetched\n")
        snap = await lane.snapshot()
        started = asyncio.Event()
        running = asyncio.create_task(
            lane.exec("echo started; sleep 30", timeout=60, on_output=lambda c: started.set())
        )
        await asyncio.wait_for(started.wait(), 30)
        await proxy.close()  # the connection drops while the command runs
        with pytest.raises(BackendUnreachable, match=r"unreachable.*Docker engine"):
            await running
        health = await lane.health()
        assert health.state == "unreachable" and not health.reachable
        with pytest.raises(BackendUnreachable, match="fetched snapshots are kept"):
            await lane.read_file("a.txt")
        with pytest.raises(BackendUnreachable):
            await lane.destroy()
        assert git(lane_repo, "rev-parse", lane.spec.snapshot_ref) == snap.commit  # fetched work stays
        await proxy.open()
        assert (await lane.health()).state == "running"
        assert await lane.read_file("a.txt") == b"fetched\n"
    finally:
        await proxy.close()


async def test_destroy_fetches_then_removes_the_container(
    make_lane: Callable[..., object], docker_engine: Engine, lane_repo: Path
) -> None:
    lane: ContainerBackend = await make_lane()  # type: ignore[misc]
    await lane.write_file("last.txt", b"last words\n")
    snap = await lane.destroy()
    assert snap is not None and git(lane_repo, "show", f"{snap.commit}:last.txt") == "last words"
    assert docker(docker_engine, "ps", "-aq", "--filter", f"name={lane.name}") == ""
    assert (await lane.health()).state == "missing"


async def test_container_is_confined_as_configured(
    make_lane: Callable[..., object], docker_engine: Engine
) -> None:
    lane: ContainerBackend = await make_lane(cpus=1.5, memory="512m", pids_limit=256)  # type: ignore[misc]
    info = json.loads(docker(docker_engine, "inspect", lane.name))[0]
    host = info["HostConfig"]
    assert host["NetworkMode"] == "none" and host["CapDrop"] == ["ALL"]
    assert host["NanoCpus"] == 1_500_000_000 and host["Memory"] == 512 * 1024**2
    assert host["PidsLimit"] == 256 and "no-new-privileges" in host["SecurityOpt"]
    assert not host.get("Binds") and info["Mounts"] == [] and not host["Privileged"]
    assert info["Config"]["User"] == "1000:1000"
    assert info["Config"]["Labels"][LABEL] == "l1"


async def test_image_from_devcontainer_image_and_build(docker_engine: Engine, lane_repo: Path) -> None:
    (lane_repo / ".devcontainer").mkdir()
    (lane_repo / ".devcontainer" / "devcontainer.json").write_text(
        '// the lane image\n{"build": {"dockerfile": "Dockerfile", "args": {"FLAVOUR": "mint"},},}\n'
    )
    (lane_repo / ".devcontainer" / "Dockerfile").write_text(
        f"FROM {docker_engine.image}\nARG FLAVOUR\nENV FLAVOUR_IS=$FLAVOUR\n"
    )
    git(lane_repo, "add", "-A")
    git(lane_repo, "commit", "-q", "-m", "devcontainer")
    spec = LaneSpec(repo=lane_repo, name="dc", base_commit=git(lane_repo, "rev-parse", "HEAD"))
    backend = await open_backend("container", spec, container=ContainerSettings(host=docker_engine.host))
    assert isinstance(backend, ContainerBackend) and backend.image.startswith("paragents-devcontainer:")
    try:
        await backend.create()
        assert (await backend.exec("echo $FLAVOUR_IS")).output.strip() == "mint"
    finally:
        await backend.destroy(force=True)
        await backend.close()
    (lane_repo / ".devcontainer" / "devcontainer.json").write_text(json.dumps({"image": docker_engine.image}))
    git(lane_repo, "commit", "-q", "-am", "plain image")
    spec = LaneSpec(repo=lane_repo, name="dc2", base_commit=git(lane_repo, "rev-parse", "HEAD"))
    backend = await open_backend("container", spec, container=ContainerSettings(host=docker_engine.host))
    assert isinstance(backend, ContainerBackend) and backend.image == docker_engine.image
    await backend.close()


async def test_unreachable_engine_is_one_clear_error(lane_repo: Path, tmp_path: Path) -> None:
    spec = LaneSpec(repo=lane_repo, name="x", base_commit=git(lane_repo, "rev-parse", "HEAD"))
    backend = ContainerBackend(spec, ContainerSettings(host=f"unix://{tmp_path}/none.sock"), "img")
    try:
        with pytest.raises(BackendUnreachable, match="lane x is unreachable: the Docker engine"):
            await backend.create()
        assert (await backend.health()).state == "unreachable"
    finally:
        await backend.close()
