"""Fixtures of the store tests: a real SQLite file under tmp_path, opened and closed per test."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from paragents.store import SessionRecord, Store


@pytest.fixture
def db_file(tmp_path: Path) -> Path:
    """Path of the database file used by the test (its directory does not exist yet)."""
    return tmp_path / "state" / "paragents.db"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An existing project directory."""
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
async def store(db_file: Path) -> AsyncIterator[Store]:
    """An open store on ``db_file``; closed after the test."""
    opened = await Store.open(db_file)
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
async def session(store: Store, project: Path) -> SessionRecord:
    """A session called 'main' in ``project``."""
    return await store.sessions.create(name="main", project_dir=project, workdir=project, model="test-model")
