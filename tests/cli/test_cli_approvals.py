"""``paragents inbox`` and ``paragents approve`` in-process (``main(argv)``) on a real store: what they
print, the answers the flags choose, and the exit codes (0 taken, 2 usage or unknown id, 5 refused)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from paragents import paths
from paragents.cli import main
from paragents.store import ApprovalRecord, Store


def seed(project: Path) -> None:
    """A session with a pending approval (id ask1) and a pending conflict (id con1)."""

    async def work() -> None:
        async with await Store.open(paths.db_path()) as store:
            s = await store.sessions.create(name="api", project_dir=project, workdir=project, model="m")
            await store.approvals.add(
                "ask1", s.id, kind="approval", tool="run_command", summary="run_command npm test",
                rules=("Bash(npm test)",),
            )  # fmt: skip
            await store.approvals.add(
                "con1", s.id, kind="conflict", tool="edit_file", summary="edit_file a.py",
                choices=("wait", "run_anyway", "skip"),
            )  # fmt: skip

    asyncio.run(work())


def row(approval_id: str) -> ApprovalRecord:
    async def work() -> ApprovalRecord | None:
        async with await Store.open(paths.db_path()) as store:
            return await store.approvals.get(approval_id)

    found = asyncio.run(work())
    assert found is not None
    return found


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "proj"
    path.mkdir()
    seed(path)
    return path


def test_inbox_lists_both_kinds_as_text_and_json(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # rich's table width when not a terminal
    assert main(["inbox", "--dir", str(project)]) == 0
    text = capsys.readouterr().out
    assert "ask1" in text and "run_command npm test" in text and "conflict (wait/run_anyway/skip)" in text
    assert main(["inbox", "--dir", str(project), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(r["id"], r["kind"], r["session"]) for r in listed] == [
        ("ask1", "approval", "api"),
        ("con1", "conflict", "api"),
    ]
    assert listed[0]["rules"] == ["Bash(npm test)"] and listed[1]["answers"] == ["wait", "run_anyway", "skip"]
    assert main(["inbox", "--dir", str(project.parent)]) == 0
    assert "nothing waits on you" in capsys.readouterr().out


def test_approve_flags_choose_the_answer_and_refusals_exit_5(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["approve", "ask1", "--deny", "--note", "use make test"]) == 0
    assert (row("ask1").answer, row("ask1").note) == ("reject_with_note", "use make test")
    assert str(row("ask1").answered_by).startswith("cli (pid ")
    capsys.readouterr()
    assert main(["approve", "ask1", "--always"]) == 5
    assert "already answered: reject_with_note by cli" in capsys.readouterr().err
    assert main(["approve", "con1", "--deny"]) == 0
    assert row("con1").answer == "skip"


def test_approve_usage_errors_exit_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["approve", "nope"]) == 2
    assert "no approval or conflict with id 'nope'" in capsys.readouterr().err
    assert main(["approve", "ask1", "--note", "x"]) == 2
    assert main(["approve", "con1", "--answer", "reread"]) == 2
    assert "not an answer it takes" in capsys.readouterr().err
    assert main(["approve", "ask1", "--session-wide", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "accepted" and out["approval"]["answer"] == "allow_session"


def test_without_a_store_nothing_is_created(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inbox", "--json"]) == 0
    assert capsys.readouterr().out.strip() == "[]"
    assert main(["approve", "abcd"]) == 2
    assert not paths.db_path().exists()


def test_a_prefix_of_an_answered_item_is_refused_naming_the_first_answer(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A second answer by prefix (or in upper case) exits 5 naming the first, not "no such id"."""

    async def add() -> None:
        async with await Store.open(paths.db_path()) as store:
            [s] = await store.sessions.all(project)
            await store.approvals.add("786a9f0c1b2d", s.id, kind="approval", tool="run_command", summary="ls")

    asyncio.run(add())
    assert main(["approve", "786a"]) == 0
    capsys.readouterr()
    assert main(["approve", "786A9", "--deny"]) == 5
    assert "already answered: allow_once by cli" in capsys.readouterr().err
    assert main(["approve", "78"]) == 2
    assert "at least 4 characters" in capsys.readouterr().err
