"""Approvals kept in the store, answered from another process: a real ``paragents run
--wait-approvals`` subprocess (real SQLite file) asks to write a file and waits on the row; the test
process answers it through the store, or ``paragents approve`` does from a third process; a second
answer is refused naming the first; a SIGKILL with the ask pending leaves the row, ``paragents inbox``
lists it, and the next start asks it again under the same id and the turn continues."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from paragents import paths
from paragents.llm.replay import ThreadedReplayServer
from paragents.llm.replay_script import ScriptedResponse
from paragents.store import Store
from tests.faults.tally import record

SESSION = "asks"
WAIT = 60.0
"""Upper bound (seconds) on waiting for a subprocess line or exit."""
ASKED = re.compile(r"paragents approve (\w+)")


def write_script(name: str = "out.txt") -> list[ScriptedResponse]:
    """The model writes ``name`` (asked: mode default), then says it is done."""
    return [
        ScriptedResponse.from_message(
            "writing the file",
            tool_calls=[
                {"id": "w1", "name": "write_file", "arguments": json.dumps({"path": name, "content": "hi\n"})}
            ],
        ),
        ScriptedResponse.from_message("the file is written"),
    ]


def cli(*argv: str) -> list[str]:
    return [sys.executable, "-m", "paragents.cli", *argv]


async def start_run(url: str, project: Path, prompt: str) -> asyncio.subprocess.Process:
    argv = cli(
        "run", "--session", SESSION, "--endpoint", url, "--model", "m", "--dir", str(project),
        "--wait-approvals", prompt,
    )  # fmt: skip
    return await asyncio.create_subprocess_exec(
        *argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=project,
        env=dict(os.environ),
    )


async def asked_id(proc: asyncio.subprocess.Process, seen: list[str] | None = None) -> str:
    """Read the run's stderr until it says it waits for an answer; return the approval id it names
    (the lines read are appended to ``seen``)."""
    assert proc.stderr is not None
    seen = [] if seen is None else seen
    while True:
        line = (await asyncio.wait_for(proc.stderr.readline(), WAIT)).decode()
        assert line, f"the run ended without asking: {seen}"
        seen.append(line)
        found = ASKED.search(line)
        if "waiting for an answer" in line and found:
            return found.group(1)


async def finish(proc: asyncio.subprocess.Process) -> tuple[int, str, str]:
    out, err = await asyncio.wait_for(proc.communicate(), WAIT)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def run_cli(*argv: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        *cli(*argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ)
    )
    return await finish(proc)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "proj"
    path.mkdir()
    return path


class Replay(ThreadedReplayServer):
    """The loopback model server, with the ``url`` it listens on."""

    url = ""


@pytest.fixture
def server() -> Iterator[Replay]:
    srv = Replay(models=["m"])
    srv.url = srv.start()
    yield srv
    srv.stop()


async def test_an_answer_through_the_store_from_another_process_unblocks_the_write(
    project: Path, server: Replay
) -> None:
    server.add(write_script(), session=SESSION)
    proc = await start_run(server.url, project, "write out.txt")
    try:
        approval_id = await asked_id(proc)
        assert not (project / "out.txt").exists()
        async with await Store.open(paths.db_path()) as store:
            (row,) = await store.approvals.find(project_dir=project)
            assert (row.id, row.tool, row.state, row.pid) == (approval_id, "write_file", "pending", proc.pid)
            result = await store.approvals.answer(approval_id, "allow_once", "test process")
            assert result.accepted
        code, _out, err = await finish(proc)
    finally:
        if proc.returncode is None:
            proc.kill()
    assert code == 0, err
    assert (project / "out.txt").read_text() == "hi\n"
    record("approval answered from another process", recovered=True)


async def test_paragents_approve_answers_and_a_second_answer_is_refused(
    project: Path, server: Replay
) -> None:
    server.add(write_script(), session=SESSION)
    proc = await start_run(server.url, project, "write out.txt")
    try:
        approval_id = await asked_id(proc)
        code, listed, _ = await run_cli("inbox", "--dir", str(project), "--json")
        assert code == 0 and [r["id"] for r in json.loads(listed)] == [approval_id]
        code, out, err = await run_cli("approve", approval_id[:6])
        assert code == 0, err
        assert "answered allow_once" in out
        code, _out, err = await run_cli("approve", approval_id, "--deny", "--note", "too late")
        assert code == 5
        assert "already answered: allow_once by cli (pid" in err
        run_code, _out, run_err = await finish(proc)
    finally:
        if proc.returncode is None:
            proc.kill()
    assert run_code == 0, run_err
    assert (project / "out.txt").exists()
    code, listed, _ = await run_cli("inbox", "--dir", str(project), "--json")
    assert json.loads(listed) == []
    record("second answer refused", recovered=True)


async def test_a_crash_with_a_pending_approval_asks_it_again_after_the_restart(
    project: Path, server: Replay
) -> None:
    server.add(write_script()[:1], session=SESSION)
    proc = await start_run(server.url, project, "write out.txt")
    try:
        approval_id = await asked_id(proc)
        os.kill(proc.pid, signal.SIGKILL)
        await finish(proc)
    finally:
        if proc.returncode is None:
            proc.kill()
    code, listed, _ = await run_cli("inbox", "--dir", str(project), "--json")
    (row,) = json.loads(listed)
    assert (row["id"], row["state"], row["waiter_gone"]) == (approval_id, "pending", True)

    # the restart: the interrupted turn continues with the same ask, then the new prompt runs
    server.add(
        [ScriptedResponse.from_message("the file is written"), ScriptedResponse.from_message("next done")],
        session=SESSION,
    )
    proc = await start_run(server.url, project, "and now?")
    seen: list[str] = []
    try:
        again = await asked_id(proc, seen)
        assert again == approval_id
        code, _out, err = await run_cli("approve", again)
        assert code == 0, err
        run_code, _out, run_err = await finish(proc)
    finally:
        if proc.returncode is None:
            proc.kill()
    assert run_code == 0, run_err
    assert f"the pending approval {approval_id} (write_file" in "".join(seen) + run_err
    assert (project / "out.txt").read_text() == "hi\n"
    async with await Store.open(paths.db_path()) as store:
        (session,) = [s for s in await store.sessions.all(None) if s.name == SESSION]
        stored = await store.messages.load(session.id)
        turns = await store.turns.all(session.id)
        approval = await store.approvals.get(approval_id)
    outcomes = [(m.message.get("tool_call_id"), m.outcome) for m in stored if m.role == "tool"]
    assert outcomes == [("w1", "interrupted"), ("w1-resumed", "ok")]
    assert [t.status for t in turns] == ["interrupted", "completed", "completed"]
    assert approval is not None and approval.answered_by is not None
    assert approval.answered_by.startswith("cli")
    record("kill -9 with an approval pending", recovered=True)
