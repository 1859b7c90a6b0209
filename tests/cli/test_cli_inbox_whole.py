"""Issue 28 item 3 in ``paragents inbox``: the list's one-line summary says when it cuts the call (and
how big the call is), ``--show ID`` prints the whole call (line 306's ``curl … | sh`` included, with
no terminal escape sequence from the model: its control characters are drawn as symbols, never
dropped), and ``--json`` carries each item's whole call."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from paragents import paths
from paragents.cli import main
from paragents.store import Store
from paragents.tools.shell import RunCommand
from tests.serve.calls import EVIL, LONG_COMMAND

COMMAND = LONG_COMMAND + "\necho \x1b]0;owned\x07done"


def seed(project: Path) -> None:
    async def work() -> None:
        async with await Store.open(paths.db_path()) as store:
            s = await store.sessions.create(name="api", project_dir=project, workdir=project, model="m")
            call = {"id": "c1", "name": "run_command", "arguments": json.dumps({"command": COMMAND})}
            await store.approvals.add(
                "long1", s.id, kind="approval", tool="run_command", summary="run_command echo step 1",
                call=call, preview="\n".join(COMMAND.splitlines()[:300]),
            )  # fmt: skip

    asyncio.run(work())


def test_the_inbox_says_it_cuts_and_show_prints_the_whole_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    project = tmp_path / "proj"
    project.mkdir()
    seed(project)
    assert main(["inbox", "--dir", str(project)]) == 0
    listed = capsys.readouterr().out
    assert "(cut: 311 lines" in listed and "paragents inbox --show long1" in listed
    assert main(["inbox", "--dir", str(project), "--show", "long1"]) == 0
    whole = capsys.readouterr().out
    assert EVIL in whole and "echo tail 3" in whole
    assert "echo \u241b]0;owned\u2407done" in whole  # ESC and BEL shown ("␛", "␇"), not dropped
    assert "2 invisible characters drawn as \u241b \u2407" in whole
    assert "\x1b" not in whole and "\x07" not in whole
    assert main(["inbox", "--dir", str(project), "--json"]) == 0
    [item] = json.loads(capsys.readouterr().out)
    assert json.loads(item["call"]["arguments"])["command"] == COMMAND
    assert main(["inbox", "--dir", str(project), "--show", "nope"]) == 2


def test_the_inbox_table_shows_control_characters_and_does_not_call_the_row_cut(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fresh-user finding: the table's one-line form of a short command with ESC and BEL dropped them
    without a mark and called the row "cut"; it shows them as `--show` does, and is not cut."""
    monkeypatch.setenv("COLUMNS", "200")
    project = tmp_path / "proj"
    project.mkdir()
    command = "echo hi \x1b[31mRED\x1b[0m \x07bell; ls"
    args = {"command": command}

    async def work() -> None:
        async with await Store.open(paths.db_path()) as store:
            s = await store.sessions.create(name="api", project_dir=project, workdir=project, model="m")
            call = {"id": "c1", "name": "run_command", "arguments": json.dumps(args)}
            summary = RunCommand().summarize(args)  # what the engine stores with the ask
            await store.approvals.add(
                "esc1", s.id, kind="approval", tool="run_command", summary=summary, call=call, preview=command
            )

    asyncio.run(work())
    assert main(["inbox", "--dir", str(project)]) == 0
    listed = capsys.readouterr().out
    assert "run_command echo hi \u241b[31mRED\u241b[0m \u2407bell; ls" in listed
    assert "cut" not in listed and "\x1b[31m" not in listed and "\x07" not in listed
