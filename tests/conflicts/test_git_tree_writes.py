"""Issue 30 item 8: git commands that rewrite the working tree (checkout, switch, reset --hard,
stash, restore, clean) reserve the whole repository for the conflict checker, so a session cannot
switch the branch under another live session's reserved file."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from paragents import events as ev
from paragents.conflicts.targets import call_targets
from tests.conflicts.conftest import ConflictEnv, gated, reply, tool


@pytest.mark.parametrize(
    "command",
    ["git checkout main", "git switch -c topic", "git -C .. reset --hard", "git stash", "git stash pop",
     "git restore a.py", "git clean -fdx", "git merge topic", "git --no-pager checkout -"],
)  # fmt: skip
def test_tree_writers_reserve_the_repository(tmp_path: Path, command: str) -> None:
    (tmp_path / ".git").mkdir()
    sub = tmp_path / "src"
    sub.mkdir()
    start = tmp_path if "-C .." not in command else sub
    found = call_targets("run_command", {"command": command}, start)
    assert str(tmp_path.resolve()) in found.paths, found


@pytest.mark.parametrize(
    "command", ["git status", "git stash list", "git reset HEAD~1", "git log -p", "git diff"]
)
def test_readers_reserve_nothing(tmp_path: Path, command: str) -> None:
    (tmp_path / ".git").mkdir()
    assert call_targets("run_command", {"command": command}, tmp_path).paths == ()


async def test_a_branch_switch_waits_for_the_session_holding_a_file(cenv: ConflictEnv) -> None:
    project = cenv.project
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    notes = project / "notes.txt"
    notes.write_text("one\n")
    rt = await cenv.runtime()
    a, b = await cenv.session(rt, "a"), await cenv.session(rt, "b")
    gate_a = asyncio.Event()
    write = tool("write_file", {"path": "notes.txt", "content": "A\n"})
    cenv.server.add([reply(tool_calls=[write]), gated(reply("a done"), gate_a)], session="a")
    switch = tool("run_command", {"command": "git switch -c other"})
    cenv.server.add([reply(tool_calls=[switch]), reply("b done")], session="b")
    cenv.sink.conflict_answers["b"] = ["skip"]
    rt.submit(a.id, "write")
    await cenv.sink.wait_for(lambda: any(e.status == "ok" for e in cenv.sink.of(ev.ToolCallFinished, a.id)))
    rt.submit(b.id, "switch")
    await rt.wait_idle(b.id)
    [conflict] = cenv.sink.of(ev.ConflictDetected, b.id)
    assert (conflict.kind, conflict.holder) == ("reservation", "a")
    branch = subprocess.run(
        ["git", "-C", str(project), "branch", "--show-current"], capture_output=True, text=True
    )
    assert branch.stdout.strip() != "other"  # skipped: the branch was not switched under a
    gate_a.set()
    await rt.wait_idle()
    await rt.shutdown()
