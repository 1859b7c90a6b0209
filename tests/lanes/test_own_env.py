"""Each lane gets its own environment (issue 27 items 1-3), on a real src-layout uv project with an
editable install of itself: the lane's ``.venv`` is a directory of its own whose editable install
names the lane's ``src/``, shares no file (inode) with the main checkout's or uv's cache, a lane
that breaks ``add()`` gets a FAILING test run (with ``.venv/bin/python -m pytest`` and with ``uv run
pytest``), the main checkout's ``.pth`` is untouched, and ``.venv/`` in ``.gitignore`` keeps the lane
clean. The project is made with ``uv init --lib`` and synced once per test session into a private
uv cache (downloads pytest from the package index the first time)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from paragents.lanes import create_lane
from paragents.lanes.envs import build_requirements, foreign_paths, host_env, link_mode, python_request
from paragents.lanes.status import lane_status
from paragents.store import Store
from tests.lanes.conftest import commit_all, sh

UV = shutil.which("uv")
pytestmark = pytest.mark.skipif(UV is None, reason="uv is not installed")

ADD = "def add(a: int, b: int) -> int:\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def _uv(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    assert UV is not None
    return subprocess.run(
        [UV, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )


@pytest.fixture(scope="session")
def uv_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One uv cache for the session's projects (never the user's)."""
    return tmp_path_factory.mktemp("uv-cache")


@pytest.fixture
def uv_project(tmp_path: Path, uv_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A committed src-layout uv project ``calc`` (uv_build backend) with pytest, synced: its
    ``.venv`` holds an editable install of ``calc`` naming ``<repo>/src``."""
    monkeypatch.setenv("UV_CACHE_DIR", str(uv_cache))
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIRTUAL_ENV")}
    repo = tmp_path / "calc"
    made = _uv(
        tmp_path, "init", "--lib", "--name", "calc", "--no-workspace", "--vcs", "git", str(repo), env=env
    )
    assert made.returncode == 0, made.stderr
    (repo / "src" / "calc" / "__init__.py").write_text(ADD)
    (repo / "tests").mkdir()
    (repo / "tests" / "test_calc.py").write_text(TEST)
    added = _uv(repo, "add", "--dev", "pytest", env=env)
    assert added.returncode == 0, added.stderr
    assert ".venv" in (repo / ".gitignore").read_text()
    sh(repo, "checkout", "-q", "-b", "main")
    commit_all(repo, "calc")
    yield repo


def _pth(venv: Path) -> list[Path]:
    return sorted(venv.glob("lib/python*/site-packages/*.pth"))


async def test_a_lane_gets_its_own_venv_and_tests_its_own_code(store: Store, uv_project: Path) -> None:
    repo = uv_project
    main_pth = {p: p.read_text() for p in _pth(repo / ".venv")}
    assert any(str(repo / "src") in text for text in main_pth.values())  # the editable install
    made = await create_lane(store, repo, "api")
    lane = Path(made.lane.path)
    venv = lane / ".venv"
    assert venv.is_dir() and not venv.is_symlink(), made.notes
    assert any("own .venv" in note for note in made.notes), made.notes
    assert foreign_paths(venv, lane) == []
    lane_pth = "".join(p.read_text() for p in _pth(venv))
    assert str(lane / "src") in lane_pth and str(repo / "src") not in lane_pth
    # item 3: `.venv/` (a directory pattern) ignores the lane's own venv: the lane is clean
    status = await lane_status(repo, made.lane)
    assert status.dirty == [], status.dirty
    # no file of the lane's venv is the main checkout's (hard links would share the inode)
    mine = next(venv.glob("lib/python*/site-packages/_pytest/__init__.py"))
    theirs = next((repo / ".venv").glob("lib/python*/site-packages/_pytest/__init__.py"))
    assert os.stat(mine).st_ino != os.stat(theirs).st_ino and os.stat(mine).st_nlink == 1

    # the agent breaks add() in its lane: the lane's own test run FAILS
    (lane / "src" / "calc" / "__init__.py").write_text(ADD.replace("a + b", "a - b"))
    run = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=lane, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 1 and "1 failed" in run.stdout, run.stdout
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    uv_run = _uv(lane, "run", "pytest", "-q", "-p", "no:cacheprovider", env=env)
    assert uv_run.returncode == 1 and "1 failed" in uv_run.stdout, uv_run.stdout + uv_run.stderr
    # ... and the main checkout is untouched: its editable install still names its own src/
    assert {p: p.read_text() for p in _pth(repo / ".venv")} == main_pth
    main_run = _uv(repo, "run", "pytest", "-q", "-p", "no:cacheprovider", env=env)
    assert main_run.returncode == 0, main_run.stdout + main_run.stderr


async def test_a_committed_venv_is_never_run_on_the_host(
    store: Store, uv_project: Path, tmp_path: Path
) -> None:
    """A ``.venv`` that came with the commit (its ``python`` a script) is neither built nor run."""
    repo = uv_project
    marker = tmp_path / "ran-on-host"
    shutil.rmtree(repo / ".venv")
    (repo / ".venv" / "bin").mkdir(parents=True)
    (repo / ".venv" / "bin" / "python").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (repo / ".venv" / "bin" / "python").chmod(0o755)
    sh(repo, "add", "-f", ".venv/bin/python")
    commit_all(repo, "a venv in the repository")
    made = await create_lane(store, repo, "v")
    assert any("came with its commit" in note for note in made.notes), made.notes
    assert not marker.exists()


def test_python_request_is_read_as_data(tmp_path: Path) -> None:
    (tmp_path / ".python-version").write_text("3.11\n")
    assert python_request(tmp_path, {}) == "3.11"
    (tmp_path / ".python-version").write_text("./evil/python\n")
    assert python_request(tmp_path, {"project": {"requires-python": ">=3.11"}}) is None
    (tmp_path / ".python-version").unlink()
    assert python_request(tmp_path, {"project": {"requires-python": ">=3.11"}}) == ">=3.11"
    assert python_request(tmp_path, {"project": {"requires-python": "$(touch x)"}}) is None


def test_build_requirements_drop_urls_and_add_editables_for_hatchling() -> None:
    data = {"build-system": {"requires": ["hatchling>=1", "evil @ https://example.invalid/x.whl"],
                             "build-backend": "hatchling.build"}}  # fmt: skip
    assert build_requirements(data) == ("hatchling.build", ["hatchling>=1", "editables"])
    assert build_requirements({}) == ("", [])


def test_never_hard_links(tmp_path: Path) -> None:
    """The link mode is clone (a reflink: its own inode) where the filesystem makes reflinks, else copy."""
    (tmp_path / "cache").mkdir()
    (tmp_path / "lane").mkdir()
    assert link_mode(tmp_path / "cache", tmp_path / "lane") in ("clone", "copy")
    assert link_mode(tmp_path / "missing", tmp_path / "lane") == "copy"


def test_host_steps_find_no_program_in_the_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    (repo / "bin").mkdir(parents=True)
    monkeypatch.setenv("PATH", f"{repo / 'bin'}:relative/bin:/usr/bin")
    monkeypatch.setenv("UV_PROJECT_ENVIRONMENT", "/elsewhere")
    env = host_env(repo / "lane", repo)
    assert env["PATH"] == "/usr/bin" and "UV_PROJECT_ENVIRONMENT" not in env
