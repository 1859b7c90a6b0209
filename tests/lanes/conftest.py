"""Fixtures of the lane tests: real git repositories in tmp dirs and an open store."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from paragents.store import Store
from tests.trusting import trusted

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def sh(repo: Path, *args: str) -> str:
    """Run git synchronously in ``repo`` (test setup only) and return stdout."""
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def commit_all(repo: Path, message: str) -> str:
    """Commit everything; the repository's setup and config files are then trusted as the user would
    (paragents.trust: a lane setup file runs only when trusted)."""
    sh(repo, "add", "-A")
    sh(repo, "commit", "-q", "-m", message)
    trusted(repo)
    return sh(repo, "rev-parse", "HEAD")


@pytest.fixture(autouse=True)
def git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)


@pytest.fixture
def empty_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    sh(repo, "init", "-q", "-b", "main")
    return repo


@pytest.fixture
def repo(empty_repo: Path) -> Path:
    """A repository on branch main with one commit (app.py, README)."""
    (empty_repo / "app.py").write_text("def hello():\n    return 1\n")
    (empty_repo / "README").write_text("readme\n")
    commit_all(empty_repo, "init")
    return empty_repo


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    opened = await Store.open(tmp_path / "state" / "paragents.db")
    try:
        yield opened
    finally:
        await opened.close()
