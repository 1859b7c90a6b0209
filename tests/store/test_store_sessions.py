"""Sessions and conversations: create, find, list order, update rules, duplicate names, /clear."""

from __future__ import annotations

from pathlib import Path

import pytest

from paragents.models import SessionState, user_message
from paragents.store import SessionRecord, Store, StoreError


async def test_create_session_fills_every_column(store: Store, project: Path) -> None:
    work = project / "sub"
    work.mkdir()
    made = await store.sessions.create(name="api", project_dir=project, workdir=work, model="m1", mode="plan")
    assert made.name == "api"
    assert made.project_dir == project.resolve()
    assert made.workdir == work.resolve()
    assert (made.model, made.mode, made.state) == ("m1", "plan", SessionState.IDLE)
    assert made.is_open and made.position == 0 and made.pid is None
    assert len(made.id) == 32 and int(made.id, 16) >= 0
    assert made.conversation_id and made.usage.total_tokens == 0 and made.session_rules == ()
    assert made.created_at <= made.updated_at
    assert await store.sessions.get(made.id) == made
    assert await store.sessions.find(project, "api") == made
    assert await store.sessions.find(project, "other") is None
    assert await store.sessions.get("nope") is None


async def test_duplicate_name_in_project_is_a_readable_error(
    store: Store, project: Path, tmp_path: Path
) -> None:
    await store.sessions.create(name="api", project_dir=project, workdir=project, model="m")
    with pytest.raises(StoreError) as err:
        await store.sessions.create(name="api", project_dir=project, workdir=project, model="m")
    text = str(err.value)
    assert "'api' already exists" in text and str(project.resolve()) in text and "another name" in text
    other = tmp_path / "other"
    other.mkdir()
    again = await store.sessions.create(name="api", project_dir=other, workdir=other, model="m")
    assert again.project_dir == other.resolve()


async def test_list_sessions_orders_open_by_position_then_closed_by_recency(
    store: Store, project: Path, tmp_path: Path
) -> None:
    made = [
        await store.sessions.create(name=n, project_dir=project, workdir=project, model="m") for n in "abcde"
    ]
    assert [s.position for s in made] == [0, 1, 2, 3, 4]
    await store.sessions.update(made[0].id, position=9)
    await store.sessions.update(made[1].id, is_open=False)
    await store.sessions.update(made[3].id, is_open=False)
    await store.sessions.update(made[1].id, model="touched-last")
    names = [s.name for s in await store.sessions.all(project)]
    assert names == ["c", "e", "a", "b", "d"]
    assert [s.name for s in await store.sessions.all(project, open_only=True)] == ["c", "e", "a"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    await store.sessions.create(name="z", project_dir=elsewhere, workdir=elsewhere, model="m")
    assert [s.name for s in await store.sessions.all(elsewhere)] == ["z"]
    assert len(await store.sessions.all()) == 6


async def test_update_session_changes_allowed_fields(store: Store, session: SessionRecord) -> None:
    updated = await store.sessions.update(
        session.id,
        name="renamed",
        model="m2",
        mode="acceptEdits",
        state=SessionState.WAITING,
        is_open=False,
        position=3,
        pid=4242,
        last_prompt_tokens=1234,
        session_rules=["Bash(ls *)", "Read(./src/**)"],
    )
    assert (updated.name, updated.model, updated.mode) == ("renamed", "m2", "acceptEdits")
    assert updated.state is SessionState.WAITING and not updated.is_open and updated.position == 3
    assert updated.pid == 4242 and updated.last_prompt_tokens == 1234
    assert updated.session_rules == ("Bash(ls *)", "Read(./src/**)")
    assert updated.updated_at >= session.updated_at
    assert await store.sessions.get(session.id) == updated
    cleared = await store.sessions.update(session.id, pid=None, state="idle")
    assert cleared.pid is None and cleared.state is SessionState.IDLE


@pytest.mark.parametrize(
    ("fields", "needle"),
    [
        ({"id": "x"}, "cannot change id"),
        ({"usage": 3}, "cannot change usage"),
        ({"state": "dancing"}, "not a session state"),
        ({"is_open": "yes"}, "is_open"),
        ({"position": -1}, "position"),
        ({"session_rules": "Bash(ls)"}, "session_rules"),
        ({"name": "  "}, "name"),
    ],
)
async def test_update_session_rejects_bad_fields(
    store: Store, session: SessionRecord, fields: dict[str, object], needle: str
) -> None:
    with pytest.raises(StoreError, match=needle):
        await store.sessions.update(session.id, **fields)
    assert await store.sessions.get(session.id) == session


async def test_rename_onto_an_existing_name_is_refused(store: Store, project: Path) -> None:
    await store.sessions.create(name="a", project_dir=project, workdir=project, model="m")
    b = await store.sessions.create(name="b", project_dir=project, workdir=project, model="m")
    with pytest.raises(StoreError, match="'a' already exists"):
        await store.sessions.update(b.id, name="a")


async def test_update_unknown_session_raises(store: Store) -> None:
    with pytest.raises(StoreError, match="no session"):
        await store.sessions.update("missing", model="x")


async def test_clear_starts_a_new_conversation_and_keeps_the_old(
    store: Store, session: SessionRecord
) -> None:
    await store.messages.append(session.id, user_message("before clear"))
    old = session.conversation_id
    new = await store.sessions.new_conversation(session.id)
    assert new != old
    assert (await store.sessions.get(session.id)).conversation_id == new  # type: ignore[union-attr]
    assert await store.messages.load_history(session.id) == []
    await store.messages.append(session.id, user_message("after clear"))
    assert await store.messages.load_history(session.id) == [user_message("after clear")]
    kept = await store.messages.load(session.id, old)
    assert [m.message for m in kept] == [user_message("before clear")]
    convs = await store.sessions.conversations(session.id)
    assert [(c.id, c.message_count, c.is_current) for c in convs] == [(old, 1, False), (new, 1, True)]
    assert await store.messages.count(session.id) == 1
    assert await store.messages.count(session.id, old) == 1
    assert await store.messages.count(session.id, all_conversations=True) == 2


async def test_conversation_title(store: Store, session: SessionRecord) -> None:
    await store.sessions.set_conversation_title(session.conversation_id, "fix the parser")
    (conv,) = await store.sessions.conversations(session.id)
    assert conv.title == "fix the parser"


async def test_new_conversation_of_unknown_session_raises(store: Store) -> None:
    with pytest.raises(StoreError, match="no session"):
        await store.sessions.new_conversation("missing")
