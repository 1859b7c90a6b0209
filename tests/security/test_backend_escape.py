"""Escape tests of the container backend (issue 31): attacks run through the real backend against a
real Docker engine; the host is checked for evidence (a write to a host path, a host mount, the engine
socket reachable from inside, secrets in the environment, a hook or fsmonitor run on the host by a
snapshot, a lying or oversized snapshot accepted)."""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path

import pytest

from paragents.backend_settings import ContainerSettings
from paragents.backends import BackendError, Health, LaneSpec
from paragents.backends.bundle import snapshot_id
from paragents.backends.container import ContainerBackend
from paragents.backends.remote import Chunk, RemoteBackend, Stdin
from paragents.backends.scripts import GIT_ENV
from tests.backends.engine import Engine, git


@pytest.fixture
async def lane(docker_engine: Engine, lane_repo: Path) -> AsyncIterator[ContainerBackend]:
    spec = LaneSpec(repo=lane_repo, name="evil", base_commit=git(lane_repo, "rev-parse", "HEAD"))
    backend = ContainerBackend(spec, ContainerSettings(host=docker_engine.host), docker_engine.image)
    await backend.create()
    try:
        yield backend
    finally:
        await backend._remove()
        await backend.close()


async def test_writes_to_host_paths_land_nowhere_on_the_host(lane: ContainerBackend, lane_repo: Path) -> None:
    marker = Path("/tmp") / f"paragents-escape-{uuid.uuid4().hex}"
    result = await lane.exec(
        f"echo pwned > {marker}; echo pwned > {lane_repo}/pwned.txt; "
        f"mkdir -p {lane_repo} && echo x > {lane_repo}/app.py; "
        f"ln -s {marker} link; echo via-link > link; echo done"
    )
    assert "done" in result.output
    assert not marker.exists()
    assert not (lane_repo / "pwned.txt").exists()
    assert (lane_repo / "app.py").read_text().startswith("def add")  # the user's checkout is untouched
    with pytest.raises(BackendError):
        await lane.write_file(str(marker), b"x")  # absolute paths are refused before anything runs


STANDARD_MOUNTS = (
    "/", "/proc", "/dev", "/sys", "/etc/hostname", "/etc/hosts", "/etc/resolv.conf",
    "/sbin/docker-init", "/usr/sbin/docker-init",
)  # fmt: skip
"""Mount points every container has: the engine's own hostname/hosts/resolv.conf files and, with
``Init``, its init binary (read-only)."""


async def test_no_host_mount_and_no_engine_socket_inside(
    lane: ContainerBackend, docker_engine: Engine, lane_repo: Path
) -> None:
    mountinfo = (await lane.exec("cat /proc/self/mountinfo")).output.splitlines()
    socket = docker_engine.host.removeprefix("unix://")
    for line in mountinfo:
        source, point = line.split()[3], line.split()[4]
        assert point in STANDARD_MOUNTS or point.startswith(("/proc/", "/dev/", "/sys/")), line
        for host_path in (str(lane_repo), socket, "/work", str(Path.home()), "/var/run/docker.sock"):
            assert not source.startswith(host_path), line
    probe = await lane.exec(
        f"for s in /var/run/docker.sock /run/docker.sock {socket}; do [ -e $s ] && echo FOUND $s; done; "
        "find / -xdev -type s 2>/dev/null; echo checked"
    )
    assert "FOUND" not in probe.output and probe.output.split() == ["checked"]


async def test_no_secrets_in_the_lane_environment(
    lane: ContainerBackend, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    values = {
        "OPENAI_API_KEY": "sk-host-openai-secret",
        "PARAGENTS_API_KEY": "host-paragents-secret",
        "PARAGENTS_SERVE_KEY": "host-serve-secret",
        "GITHUB_TOKEN": "ghp_hostsecret",
        "KUBECONFIG": str(tmp_path / "kubeconfig"),
        "DOCKER_CERT_PATH": str(tmp_path / "certs"),
        "SSH_AUTH_SOCK": str(tmp_path / "agent.sock"),
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    seen = (await lane.exec("env; cat /proc/1/environ | tr '\\0' '\\n'")).output
    for name, value in values.items():
        assert name not in seen and value not in seen, name
    env = dict(line.split("=", 1) for line in (await lane.exec("env")).output.splitlines() if "=" in line)
    assert env["HOME"] == "/tmp" and "PATH" in env


async def test_not_root_no_capabilities_no_network(lane: ContainerBackend) -> None:
    status = (
        await lane.exec("id -u; grep -E '^(CapEff|NoNewPrivs)' /proc/self/status; cat /proc/net/dev")
    ).output
    lines = status.splitlines()
    assert lines[0] != "0"
    assert "CapEff:\t0000000000000000" in status and "NoNewPrivs:\t1" in status
    interfaces = {line.split(":")[0].strip() for line in lines if ":" in line and "|" not in line}
    assert interfaces <= {"lo", "CapEff", "NoNewPrivs"}
    net = await lane.exec("exec 3<>/dev/tcp/1.1.1.1/53 && echo CONNECTED", timeout=10)
    assert "CONNECTED" not in net.output


async def test_hostile_git_config_in_the_lane_runs_nothing_on_the_host(
    lane: ContainerBackend, lane_repo: Path
) -> None:
    marker = Path("/tmp") / f"paragents-fsmonitor-{uuid.uuid4().hex}"
    hook = f"#!/bin/sh\ntouch {marker}\n"
    assert (
        await lane.exec(
            f"git config core.fsmonitor 'touch {marker}'; git config core.hooksPath hooks; mkdir -p hooks; "
            f"printf '{hook}' > hooks/post-checkout; chmod +x hooks/post-checkout; cp hooks/post-checkout "
            "hooks/reference-transaction; git add -A; git commit -qm hooks; echo ok"
        )
    ).ok
    snap = await lane.snapshot()
    assert not marker.exists()  # neither in the lane's snapshot run (inside) nor on the host
    assert "hooksPath" not in (lane_repo / ".git" / "config").read_text()
    assert git(lane_repo, "cat-file", "-t", snap.commit) == "commit"


class Scripted(RemoteBackend):
    """A remote lane whose answers are scripted: what a hostile lane could send back."""

    kind = "container"

    def __init__(self, spec: LaneSpec, answer: bytes, max_snapshot_bytes: int = 1_000_000) -> None:
        super().__init__(spec, max_snapshot_bytes=max_snapshot_bytes)
        self.answer = answer

    @property
    def where(self) -> str:
        return "scripted"

    async def health(self) -> Health:
        raise NotImplementedError

    async def _run(
        self,
        argv: Sequence[str],
        *,
        on_chunk: Chunk,
        stdin: Stdin = None,
        env: Mapping[str, str] | None = None,
    ) -> int:
        on_chunk(1, self.answer)
        return 0


def snapshot_commit(repo: Path, tree: str, head: str) -> str:
    """A commit shaped as a lane's snapshot (identity, dates, message): the checks after the id check
    are what a hostile lane meets, since it can make such commits as easily."""
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": "@0 +0000", "GIT_COMMITTER_DATE": "@0 +0000"}
    return subprocess.run(
        ["git", "commit-tree", tree, "-p", head, "-m", "paragents snapshot"],
        cwd=repo, env=env, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip


def _bundle_of(lane_repo: Path, tmp: Path, files: dict[str, str]) -> tuple[str, bytes]:
    """A real snapshot bundle made in a clone of ``repo`` holding ``files`` (commit id, header+bundle)."""
    clone = tmp / f"clone-{uuid.uuid4().hex[:6]}"
    git(lane_repo, "clone", "-q", str(lane_repo), str(clone))
    git(clone, "config", "user.name", "evil")
    git(clone, "config", "user.email", "evil@example.com")
    for name, text in files.items():
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        (clone / name).write_text(text)
    git(clone, "add", "-A")
    head = git(clone, "rev-parse", "HEAD")
    tree = git(clone, "write-tree")
    commit = snapshot_commit(clone, tree, head)
    git(clone, "update-ref", "refs/paragents/snapshot", commit)
    git(clone, "bundle", "create", "-q", str(tmp / "b.bundle"), "refs/paragents/snapshot", f"^{head}")
    return commit, f"{commit} {head} {tree}\n".encode() + (tmp / "b.bundle").read_bytes()


def _spec(lane_repo: Path) -> LaneSpec:
    return LaneSpec(repo=lane_repo, name="evil", base_commit=git(lane_repo, "rev-parse", "HEAD"))


async def test_a_snapshot_that_lies_about_its_commit_is_refused(lane_repo: Path, tmp_path: Path) -> None:
    commit, answer = _bundle_of(lane_repo, tmp_path, {"a.txt": "a"})
    forged = answer.replace(commit.encode(), b"f" * 40, 1)
    with pytest.raises(BackendError, match="reported snapshot"):
        await Scripted(_spec(lane_repo), forged).snapshot()
    assert git(lane_repo, "for-each-ref", "refs/paragents") == ""


async def test_an_oversized_or_garbled_snapshot_is_refused(lane_repo: Path, tmp_path: Path) -> None:
    _, answer = _bundle_of(lane_repo, tmp_path, {"big.txt": os.urandom(50_000).hex()})
    with pytest.raises(BackendError, match="over the"):
        await Scripted(_spec(lane_repo), answer, max_snapshot_bytes=1000).snapshot()
    with pytest.raises(BackendError, match="not 'COMMIT HEAD TREE'"):
        await Scripted(_spec(lane_repo), b"$(touch /tmp/x) ; rm -rf /\n").snapshot()
    head = git(lane_repo, "rev-parse", "HEAD")
    with pytest.raises(BackendError, match="not the snapshot commit of its tree and head"):
        await Scripted(
            _spec(lane_repo), f"{'a' * 40} {head} {'b' * 40}\n".encode() + b"# v2 git bundle\nnot a bundle"
        ).snapshot()
    shaped = snapshot_id("b" * 40, head)  # ids that agree: git itself refuses the bundle
    with pytest.raises(BackendError, match="refused by git"):
        await Scripted(
            _spec(lane_repo), f"{shaped} {head} {'b' * 40}\n".encode() + b"# v2 git bundle\nnot a bundle"
        ).snapshot()
    assert git(lane_repo, "for-each-ref", "refs/paragents") == ""


async def test_a_snapshot_with_a_dot_git_path_is_refused_by_fsck(lane_repo: Path, tmp_path: Path) -> None:
    """A tree entry named ``.git`` (a nested repository planted for the host's git) fails fsck."""
    clone = tmp_path / "clone"
    git(lane_repo, "clone", "-q", str(lane_repo), str(clone))
    git(clone, "config", "user.name", "evil")
    git(clone, "config", "user.email", "evil@example.com")
    head = git(clone, "rev-parse", "HEAD")
    blob = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"], cwd=clone, input="[core]\n\tfsmonitor = touch /tmp/x\n",
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    inner = subprocess.run(
        ["git", "mktree"],
        cwd=clone,
        input=f"100644 blob {blob}\tconfig\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    tree = subprocess.run(
        ["git", "mktree"],
        cwd=clone,
        input=f"040000 tree {inner}\t.git\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    commit = snapshot_commit(clone, tree, head)
    git(clone, "update-ref", "refs/paragents/snapshot", commit)
    git(clone, "bundle", "create", "-q", str(tmp_path / "e.bundle"), "refs/paragents/snapshot", f"^{head}")
    answer = f"{commit} {head} {tree}\n".encode() + (tmp_path / "e.bundle").read_bytes()
    with pytest.raises(BackendError, match="refused by git"):
        await Scripted(_spec(lane_repo), answer).snapshot()
    assert git(lane_repo, "for-each-ref", "refs/paragents") == ""
