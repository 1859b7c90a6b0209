"""The sandbox stays usable while it keeps git's config read-only (issue 25 item 1 (d)): in the
default sandbox, with ``autoAllow``, an agent commits in its lane and in a plain repository without
an extra ask, and ``uv run`` works offline with a cold private cache. The files that decide what
host git runs stay read-only in both."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from paragents import events as ev
from tests.security.conftest import Host, Hostile, git_repo, require_bwrap

SANDBOX = {"sandbox": {"mode": "required", "autoAllow": True}}
WORK = (
    "echo 'def add(a, b):\n    return a + b' > calc.py && git add -A && git commit -qm 'add calc' "
    "&& git diff HEAD~1 --stat && git log --oneline -1"
)


@pytest.fixture(autouse=True)
def _bwrap() -> None:
    require_bwrap()


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()


async def test_an_agent_commits_in_its_lane_without_an_ask(host: Host, hostile: Hostile) -> None:
    repo = git_repo(host.root / "project")
    rt = await hostile.open(repo, **SANDBOX)
    view = await rt.lifecycle.new_session("api", lane=True)
    out = await hostile.attack(
        view,
        WORK,
        "git config core.fsmonitor x; git branch -f main HEAD; git update-ref refs/heads/main HEAD; true",
    )
    asked = [e.call.id for e in hostile.sink.of(ev.PermissionRequested, view.id)]
    assert "c0" not in asked  # add, commit, diff, log: no ask (the second command's `git config` may)
    assert "calc.py | 2 ++" in out[0] and "add calc" in out[0], out[0]
    assert git(repo, "log", "--format=%s", "-1", "paragents/api") == "add calc"
    assert git(repo, "log", "--format=%s", "-1", "main") == "init"  # other branches stay read-only
    assert "fsmonitor" not in (repo / ".git" / "config").read_text()


async def test_an_agent_commits_in_a_plain_repository(host: Host, hostile: Hostile) -> None:
    repo = git_repo(host.root / "project")
    rt = await hostile.open(repo, **SANDBOX)
    view = await rt.lifecycle.new_session("a")
    out = await hostile.attack(
        view, WORK, "mv .git g2; echo x > .git/hooks/post-commit; git config a.b c; true"
    )
    assert "c0" not in [e.call.id for e in hostile.sink.of(ev.PermissionRequested, view.id)]
    assert "calc.py | 2 ++" in out[0], out[0]
    assert git(repo, "log", "--format=%s", "-1") == "add calc"
    assert (repo / ".git").is_dir() and not (repo / "g2").exists()
    assert not (repo / ".git/hooks/post-commit").exists() and "a.b" not in (repo / ".git/config").read_text()


@pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not installed")
async def test_uv_run_works_offline_with_a_cold_private_cache(host: Host, hostile: Hostile) -> None:
    pyproject = '[project]\nname = "calc"\nversion = "0.1.0"\nrequires-python = ">=3.11"\ndependencies = []\n'
    repo = git_repo(host.root / "project", {"pyproject.toml": pyproject, ".gitignore": ".venv/\n"})
    (repo / "test_calc.py").write_text(
        "import unittest\n\nclass T(unittest.TestCase):\n    def test(self):\n        pass\n"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "tests")
    rt = await hostile.open(repo, **SANDBOX)
    view = await rt.lifecycle.new_session("api", lane=True)
    import sys

    subprocess.run(
        ["uv", "sync", "--offline", "-q", "--python", sys.executable], cwd=view.workdir, check=True
    )
    out = await hostile.attack(view, "uv run python -m unittest -q 2>&1; echo cache=$UV_CACHE_DIR")
    assert "OK" in out[0] and "exit code 0" in out[0], out[0]
    cache = out[0].split("cache=")[1].split()[0]
    assert cache.startswith(str(host.state / "sandbox" / view.id))


PYTEST_PACKAGES = ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "py.py")


@pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not installed")
async def test_uv_run_pytest_in_a_lane_with_the_home_hidden(host: Host, hostile: Hostile) -> None:
    """The home is hidden (escape 12) and the lane's objects are private (escape 8): ``uv run pytest``
    still runs, and ``git diff`` still shows the work."""
    import sys
    import sysconfig

    pyproject = '[project]\nname = "calc"\nversion = "0.1.0"\nrequires-python = ">=3.11"\ndependencies = []\n'
    repo = git_repo(host.root / "project", {"pyproject.toml": pyproject, ".gitignore": ".venv/\n"})
    (repo / "test_calc.py").write_text("def test_add():\n    assert 1 + 1 == 2\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "tests")
    rt = await hostile.open(repo, **SANDBOX)
    view = await rt.lifecycle.new_session("api", lane=True)
    subprocess.run(
        ["uv", "sync", "--offline", "-q", "--python", sys.executable], cwd=view.workdir, check=True
    )
    ours = Path(sysconfig.get_paths()["purelib"])
    theirs = next((view.workdir / ".venv" / "lib").glob("python3*/site-packages"))
    for name in PYTEST_PACKAGES:  # copies (own inodes), as the lane's own environment build makes
        source = ours / name
        if source.is_dir():
            shutil.copytree(source, theirs / name)
        elif source.exists():
            shutil.copy2(source, theirs / name)
    out = await hostile.attack(
        view,
        "uv run --offline pytest -q -p no:cacheprovider 2>&1; "
        "echo 'x = 1' >> test_calc.py && git diff --stat",
    )
    assert "1 passed" in out[0] and "test_calc.py | 1 +" in out[0], out[0]
    assert "c0" not in [e.call.id for e in hostile.sink.of(ev.PermissionRequested, view.id)]


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
async def test_npm_test_runs_in_a_lane(host: Host, hostile: Hostile) -> None:
    package = '{"name": "calc", "version": "1.0.0", "scripts": {"test": "node test.js"}}\n'
    repo = git_repo(host.root / "project", {"package.json": package, "test.js": "console.log('node-ok')\n"})
    rt = await hostile.open(repo, **SANDBOX)
    view = await rt.lifecycle.new_session("api", lane=True)
    out = await hostile.attack(view, "npm test 2>&1")
    assert "node-ok" in out[0] and "exit code 0" in out[0], out[0]


async def test_a_plain_repository_commit_has_the_users_identity_from_the_hidden_home(
    host: Host, hostile: Hostile, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No ``GIT_AUTHOR_*`` in the environment: the identity comes from the user's ``~/.gitconfig``,
    which the sandbox shows as a file of that identity alone."""
    from tests.security.conftest import GIT_IDENTITY

    for name in GIT_IDENTITY:
        monkeypatch.delenv(name)
    repo = git_repo(host.root / "project")
    rt = await hostile.open(repo, **SANDBOX)
    view = await rt.lifecycle.new_session("a")
    out = await hostile.attack(view, WORK)
    assert "add calc" in out[0], out[0]
    assert git(repo, "log", "-1", "--format=%an <%ae>") == "t <t@example.com>"
