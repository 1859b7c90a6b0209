"""Memory notes of a project and of its sessions."""

from __future__ import annotations

from pathlib import Path

import pytest

from paragents.store import SessionRecord, Store, StoreError


async def test_notes(store: Store, session: SessionRecord, project: Path) -> None:
    project_note = await store.notes.add(project, "tests run with uv run pytest", author="user")
    await store.notes.add(project, "working on the parser", session_id=session.id, author="main")
    assert [n.text for n in await store.notes.all(project)] == ["tests run with uv run pytest"]
    both = await store.notes.all(project, session.id)
    assert [(n.session_id, n.author) for n in both] == [(None, "user"), (session.id, "main")]
    assert both[0].project_dir == project.resolve()
    assert await store.notes.delete(project_note) is True
    assert await store.notes.delete(project_note) is False
    with pytest.raises(StoreError, match="empty"):
        await store.notes.add(project, "  ", author="user")
