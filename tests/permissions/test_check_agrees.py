"""``paragents permissions check`` answers exactly what a live session decides (issue 26 item 4):
every shared fixture and a set of cases of this suite (modes, command forms, reads, edits) run
through both a real Runtime session, whose scripted model calls the tool, and the CLI; the
decisions (and the rule and scope) must be the same."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from permission_fixtures import case_insensitive_disk, fixture_files, materialise

from paragents import events as ev
from paragents.cli.permissions import main
from paragents.events import PermissionAnswer
from paragents.llm.replay import ReplayServer, ScriptedResponse
from paragents.permissions import Policy
from paragents.sessions.runtime import Runtime
from tests.trusting import trusted

AGENT_TOOL = {"Bash": "run_command", "Read": "read_file", "Edit": "write_file"}


@dataclass(frozen=True)
class Check:
    """One call: the agent tool, its arguments, the session's mode (None: the settings' default)."""

    tool: str
    args: dict[str, Any]
    mode: str | None


def _rejecting_sink(event: ev.Event) -> None:
    if isinstance(event, ev.PermissionRequested) and not event.reply.done():
        event.reply.set_result(PermissionAnswer("reject_once"))


async def session_decision(server: ReplayServer, project: Path, db: Path, check: Check) -> dict[str, Any]:
    """The audit row of the call when a real session's model makes it (asks are rejected)."""
    call = {"id": "call_1", "name": check.tool, "arguments": json.dumps(check.args)}
    server.add(
        [ScriptedResponse.from_message(tool_calls=[call]), ScriptedResponse.from_message(content="ok")]
    )
    cfg = {"base_url": server.base_url, "model": "m", "max_retries": 0}
    rt = await Runtime.create(trusted(project), cli_overrides=cfg, db_path=db)  # the user's own rules
    rt.set_sink(_rejecting_sink)
    try:
        view = await rt.lifecycle.new_session("agree", mode=check.mode, open_panel=False)
        rt.submit(view.id, "go")
        await asyncio.wait_for(rt.wait_idle(view.id), 60)
        rows = [r for r in await rt.store.audit.recent(view.id) if r["tool"] == check.tool]
        assert rows, f"the session made no decision for {check}"
        return rows[-1]
    finally:
        await rt.shutdown()


def cli_decision(project: Path, check: Check, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    args = ["check", "--tool", check.tool, "--input", json.dumps(check.args), "--cwd", str(project), "--json"]
    if check.mode:
        args += ["--mode", check.mode]
    assert main(args) == 0
    return dict(json.loads(capsys.readouterr().out))


@pytest.fixture
async def server() -> AsyncIterator[ReplayServer]:
    async with ReplayServer(models=["m"]) as replay:
        yield replay


async def agree(
    server: ReplayServer, project: Path, db: Path, check: Check, capsys: pytest.CaptureFixture[str]
) -> str:
    live = await session_decision(server, project, db, check)
    cli = cli_decision(project, check, capsys)
    assert (cli["decision"], cli["rule"], cli["scope"]) == (live["decision"], live["rule"], live["scope"]), (
        check,
        cli["reason"],
        live["reason"],
    )
    assert cli["reason"] == live["reason"]
    return str(cli["decision"])


FIXTURES = fixture_files()


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
async def test_every_shared_fixture_agrees(
    path: Path,
    tmp_path: Path,
    server: ReplayServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    case = materialise(path, tmp_path)
    if case.data.get("fs", {}).get("case_insensitive") and not case_insensitive_disk(tmp_path):
        pytest.skip("this fixture needs a case-insensitive filesystem")  # ok: only when one is needed
    monkeypatch.setenv("HOME", str(case.home))
    # the fixture's rules become the project's own file (the session reads no --settings)
    (case.cwd / "permissions.json").write_text(case.settings_path.read_text(encoding="utf-8"))
    for earlier in case.data.get("before", []):
        policy = Policy.load(case.cwd)
        got = policy.decide(earlier["tool"], case.tool_input(earlier["tool"], earlier["input"]), cwd=case.cwd)
        if earlier.get("answer") in ("allow_always", "reject_always"):
            if earlier["answer"] == "allow_always":
                policy.remember_always(list(got.suggested_rules), "allow")
            else:
                policy.remember_always(list(got.suggested_rules), "deny")
    family = case.data["tool"]
    args = case.tool_input(family, case.data["input"])
    if family == "Edit":
        args = {**args, "content": "x\n"}
    check = Check(AGENT_TOOL[family], args, case.data.get("mode"))
    decision = await agree(server, case.cwd, tmp_path / "db" / "p.db", check, capsys)
    assert decision == case.data["expected"], case.data["title"]


RULES = {
    "allow": ["Bash(ls *)", "Bash(echo *)", "Bash(git status)", "Bash(cat *)"],
    "deny": ["Bash(rm *)", "Bash(git push *)", "Read(.env)", "Edit(//etc/**)"],
    "ask": ["Bash(npm publish *)"],
}
CASES = [
    Check("run_command", {"command": "ls -la"}, None),
    Check("run_command", {"command": "ls && rm -rf x"}, None),
    Check("run_command", {"command": "bash <<< 'rm -rf x'"}, "bypassPermissions"),
    Check("run_command", {"command": "curl x | sh"}, "default"),
    Check("run_command", {"command": "git -C . push"}, "acceptEdits"),
    Check("run_command", {"command": "base64 .env"}, "bypassPermissions"),
    Check("run_command", {"command": "echo hi > out.txt"}, "acceptEdits"),
    Check("run_command", {"command": "echo hi > out.txt"}, "default"),
    Check("run_command", {"command": "npm publish --tag x"}, "bypassPermissions"),
    Check("run_command", {"command": "make all"}, "dontAsk"),
    Check("run_command", {"command": "cat notes.txt"}, "plan"),
    Check("read_file", {"path": ".env"}, None),
    Check("read_file", {"path": "notes.txt"}, "plan"),
    Check("write_file", {"path": "new.txt", "content": "x"}, "acceptEdits"),
    Check("write_file", {"path": "new.txt", "content": "x"}, "plan"),
    Check("write_file", {"path": ".git/config", "content": "x"}, "bypassPermissions"),
]


@pytest.mark.parametrize("check", CASES, ids=lambda c: f"{c.tool}-{c.mode}-{json.dumps(c.args)[:40]}")
async def test_suite_cases_agree(
    check: Check, tmp_path: Path, server: ReplayServer, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "notes.txt").write_text("hello\n")
    (project / ".env").write_text("KEY=1\n")
    (project / "permissions.json").write_text(json.dumps({"permissions": RULES}))
    await agree(server, project, tmp_path / "db" / "p.db", check, capsys)


async def test_the_settings_default_mode_is_the_sessions_and_the_checks(
    tmp_path: Path, server: ReplayServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """In an acceptEdits project a session writes without asking; the check says so too."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "permissions.json").write_text(json.dumps({"permissions": {"defaultMode": "acceptEdits"}}))
    check = Check("write_file", {"path": "a.txt", "content": "x"}, None)
    assert await agree(server, project, tmp_path / "db" / "p.db", check, capsys) == "allow"
