"""A damaged database file is detected on open, kept aside, salvaged, and reported; never silently lost."""

from __future__ import annotations

import re
from pathlib import Path

from paragents.models import user_message
from paragents.store import Store


async def _fill(db_file: Path, project: Path, sessions: int = 3, messages: int = 100) -> dict[str, list[str]]:
    contents: dict[str, list[str]] = {}
    async with await Store.open(db_file) as store:
        for n in range(sessions):
            made = await store.sessions.create(name=f"s{n}", project_dir=project, workdir=project, model="m")
            texts = [f"{n}:{i}:" + "x" * 1000 for i in range(messages)]
            for text in texts:
                await store.messages.append(made.id, user_message(text))
            contents[made.id] = texts
    return contents


def _kept_copy(note: str) -> Path:
    match = re.search(r"a copy was kept at (\S+?);", note)
    assert match, note
    return Path(match.group(1))


async def test_garbage_file_is_kept_aside_and_reported(db_file: Path, project: Path) -> None:
    db_file.parent.mkdir(parents=True)
    garbage = b"this is not an SQLite database\n" * 200
    db_file.write_bytes(garbage)
    async with await Store.open(db_file) as store:
        note = store.recovery_note
        assert note is not None
        assert "the database was damaged" in note and "0 sessions recovered" in note
        kept = _kept_copy(note)
        assert kept.name.startswith("paragents.db.corrupt-") and kept.parent == db_file.parent
        assert kept.read_bytes() == garbage
        made = await store.sessions.create(name="fresh", project_dir=project, workdir=project, model="m")
        await store.messages.append(made.id, user_message("works"))
        assert await store.messages.load_history(made.id) == [user_message("works")]
    async with await Store.open(db_file) as again:
        assert again.recovery_note is None
        assert [s.name for s in await again.sessions.all()] == ["fresh"]


async def test_truncated_file_is_salvaged(db_file: Path, project: Path) -> None:
    contents = await _fill(db_file, project)
    data = db_file.read_bytes()
    assert not Path(f"{db_file}-wal").exists()
    db_file.write_bytes(data[: int(len(data) * 0.6)])

    async with await Store.open(db_file) as store:
        note = store.recovery_note
        assert note is not None and "the database was damaged" in note
        assert _kept_copy(note).read_bytes() == data[: int(len(data) * 0.6)]
        sessions = await store.sessions.all()
        assert f"{len(sessions)} sessions recovered" in note
        assert len(sessions) == 3
        total = 0
        for record in sessions:
            texts = [m["content"] for m in await store.messages.load_history(record.id)]
            # in order, none invented; a lost page may leave a gap (the reverse scan reads past it)
            remaining = iter(contents[record.id])
            assert all(text in remaining for text in texts)
            total += len(texts)
        assert 0 < total < 300
        assert f"({total} messages)" in note
        await store.messages.append(sessions[0].id, user_message("still usable"))


async def test_wal_and_shm_files_are_moved_with_the_copy(db_file: Path) -> None:
    db_file.parent.mkdir(parents=True)
    db_file.write_bytes(b"\0garbage" * 512)
    Path(f"{db_file}-wal").write_bytes(b"stale wal")
    async with await Store.open(db_file) as store:
        assert store.recovery_note is not None
        kept = _kept_copy(store.recovery_note)
    assert Path(f"{kept}-wal").read_bytes() == b"stale wal"


async def test_healthy_file_gets_no_note_and_no_copy(db_file: Path, project: Path) -> None:
    await _fill(db_file, project, sessions=1, messages=3)
    async with await Store.open(db_file) as store:
        assert store.recovery_note is None
    assert not list(db_file.parent.glob("*.corrupt-*"))
