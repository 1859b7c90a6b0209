"""TODO(issue 29): remove with ``Store.__getattr__`` and ``paragents/store/moved.py``.

The mixin-era method names still reach their repositories while other branches merge: every name
of the table resolves to a method (or attribute) of the repository it names, an old call does what
the repository call does, and a name no repository (or several) has is an AttributeError."""

from __future__ import annotations

from pathlib import Path

import pytest

from paragents.store import SessionRecord, Store
from paragents.store.lanes import LanesRepo
from paragents.store.moved import MOVED


async def test_every_old_name_names_a_member_of_its_repository(store: Store) -> None:
    missing = [
        f"{old} -> {repo}.{new}"
        for old, (repo, new) in MOVED.items()
        if not hasattr(getattr(store, repo, None), new)
    ]
    assert missing == []


async def test_an_old_call_goes_to_the_repository(store: Store, project: Path) -> None:
    made: SessionRecord = await store.create_session(
        name="api", project_dir=project, workdir=project, model="m"
    )
    assert await store.sessions.get(made.id) == made
    assert [s.id for s in await store.list_sessions(project)] == [made.id]
    assert store.unfinished_turns is store.turns.unfinished


async def test_a_method_one_repository_has_is_found_and_others_are_refused(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(LanesRepo, "added_on_a_branch", lambda self: "lanes", raising=False)
    assert store.added_on_a_branch() == "lanes"
    for name in ("get", "no_such_method", "_db"):  # several repositories have `get`
        with pytest.raises(AttributeError, match=name):
            getattr(store, name)
