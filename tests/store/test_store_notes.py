"""Memory notes of a project and of its sessions."""

from __future__ import annotations

from pathlib import Path

import pytest

from paragents.store import SessionRecord, Store, StoreError


async def test_notes(store: Store, session: SessionRecord, project: Path) -> None:
    project_note = await store.add_note(project, "tests run with uv run pytest", author="user")
    await store.add_note(project, "working on the parser", session_id=session.id, author="main")
    assert [n.text for n in await store.list_notes(project)] == ["tests run with uv run pytest"]
    both = await store.list_notes(project, session.id)
    assert [(n.session_id, n.author) for n in both] == [(None, "user"), (session.id, "main")]
    assert both[0].project_dir == project.resolve()
    assert await store.delete_note(project_note) is True
    assert await store.delete_note(project_note) is False
    with pytest.raises(StoreError, match="empty"):
        await store.add_note(project, "  ", author="user")
