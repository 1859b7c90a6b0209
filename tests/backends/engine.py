"""Fixtures of the backend tests (a pytest plugin: tests/conftest.py loads it, so tests/security uses
them too): a real Docker Engine and the offline lane image, a git repository.

``docker_engine`` (session): the engine named by ``PARAGENTS_TEST_DOCKER_HOST`` (``.ci/run`` starts
one and exports it), else a private ``dockerd`` this fixture starts itself (root and Debian's
docker.io needed) and stops at the end. Never the user's own ``DOCKER_HOST``. The image comes from
``scripts/docker-testenv image`` (built offline, cached). Without an engine the tests are skipped,
except in CI (``PARAGENTS_CI=1``), where they fail."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "docker-testenv"
CACHE = os.environ.get("PARAGENTS_TEST_CACHE") or str(Path.home() / ".cache" / "paragents-test")
"""Read at import, before the per-test HOME of tests/conftest.py applies."""


@dataclass(frozen=True)
class Engine:
    host: str
    image: str


def _missing(why: str) -> None:
    if os.environ.get("PARAGENTS_CI"):
        pytest.fail(f"CI must run the container backend tests: {why}")
    pytest.skip(why)


def _script(*args: str, host: str | None = None, timeout: float = 600) -> str:
    env = {**os.environ, "PARAGENTS_TEST_CACHE": CACHE}
    if host:
        env["DOCKER_HOST"] = host
    done = subprocess.run(
        [str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"docker-testenv {' '.join(args)} failed: {done.stderr.strip()[-2000:]}")
    return done.stdout.strip()


@pytest.fixture(scope="session")
def docker_engine() -> Iterator[Engine]:
    host = os.environ.get("PARAGENTS_TEST_DOCKER_HOST")
    started: str | None = None
    if not host:
        if os.geteuid() != 0 or shutil.which("dockerd") is None or shutil.which("docker") is None:
            _missing("no Docker engine: install docker.io and run as root, or set PARAGENTS_TEST_DOCKER_HOST")
        started = tempfile.mkdtemp(prefix="pgd-", dir="/tmp")  # short: the socket path has a length limit
        try:
            host = _script("start", started, timeout=120)
        except RuntimeError as exc:
            shutil.rmtree(started, ignore_errors=True)
            _missing(str(exc))
    assert host is not None
    try:
        image = _script("image", host=host)
    except RuntimeError as exc:
        _missing(str(exc))
    try:
        yield Engine(host, image)
    finally:
        _remove_lane_containers(host)
        if started:
            _script("stop", started, timeout=60)
            shutil.rmtree(started, ignore_errors=True)


def _remove_lane_containers(host: str) -> None:
    """Remove what a failed test left (lane containers carry the dev.paragents.lane label)."""
    env = {**os.environ, "DOCKER_HOST": host}
    ids = subprocess.run(
        ["docker", "ps", "-aq", "--filter", "label=dev.paragents.lane"],
        env=env, capture_output=True, text=True, check=False,
    ).stdout.split()  # fmt: skip
    if ids:
        subprocess.run(["docker", "rm", "-f", *ids], env=env, capture_output=True, check=False)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def lane_repo(tmp_path: Path) -> Path:
    """A repository with two files, a .gitignore (build/) and one commit on main."""
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "t")
    git(path, "config", "user.email", "t@example.com")
    (path / "app.py").write_text("def add(a, b):\n    return a - b\n")
    (path / "README.md").write_text("demo\n")
    (path / ".gitignore").write_text("build/\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "init")
    return path
