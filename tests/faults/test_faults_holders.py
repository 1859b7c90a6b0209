"""Two real ``paragents run`` processes on one session: while the first is mid-turn, the second is
refused with a clear "held by pid N" (exit 4) unless it passes ``--take-over``; once the first is
killed, the next run takes the session over without asking, repairs the killed turn and says so on
stderr and in ``--json`` ``notes``. A reply that broke off mid-stream is in ``--json`` marked
``"incomplete": true``."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from paragents import paths
from paragents.llm.replay import ScriptedResponse, ThreadedReplayServer
from tests.faults.tally import record
from tests.patience import HANG_GUARD_S

WAIT = HANG_GUARD_S
SESSION = "shared"


def run(url: str, project: Path, prompt: str, *extra: str) -> subprocess.Popen[str]:
    argv = [
        sys.executable, "-m", "paragents.cli", "run", "--session", SESSION, "--endpoint", url,
        "--model", "m", "--dir", str(project), "--json", *extra, prompt,
    ]  # fmt: skip
    return subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ), cwd=project,
    )  # fmt: skip


def test_second_process_is_refused_then_takes_over_a_dead_holder(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    refused = took_over = False
    with ThreadedReplayServer(models=["m"]) as server:
        url = server.base_url
        server.add(ScriptedResponse.from_message("warm-up"), session=SESSION)
        first_run = run(url, project, "warm up")
        out, err = first_run.communicate(timeout=WAIT)
        assert first_run.returncode == 0, err

        hit = threading.Event()

        async def gate(i: int) -> None:
            if i == 1:
                hit.set()
                await asyncio.Event().wait()  # the first process stays mid-stream until killed

        stuck = ScriptedResponse.from_message("half of a reply that never ends", chunk_size=4)
        stuck.before_read = gate
        server.add(stuck, session=SESSION)
        holder = run(url, project, "long prompt")
        try:
            assert hit.wait(WAIT), "the first run never reached the stream"
            second = run(url, project, "second prompt")
            out, err = second.communicate(timeout=WAIT)
            assert second.returncode == 4, (out, err)
            assert f"held by pid {holder.pid}" in err and "--take-over" in err
            assert "Traceback" not in err
            refused = True
        finally:
            holder.kill()
            holder.communicate(timeout=WAIT)
        assert holder.returncode == -signal.SIGKILL

        server.add(ScriptedResponse.from_message("answer after the take-over"), session=SESSION)
        third = run(url, project, "third prompt")
        out, err = third.communicate(timeout=WAIT)
        assert third.returncode == 0, err
        result = json.loads(out)
        notes = result["notes"]
        assert any(f"taken over from pid {holder.pid}" in n and "its process is gone" in n for n in notes)
        assert any("interrupted" in n and str(holder.pid) in n for n in notes), notes
        assert all(f"note: {n}" in err for n in notes)
        assert result["messages"][-1]["content"] == "answer after the take-over"
        took_over = True
    record("second process on a held session (refused, exit 4)", recovered=refused)
    record("holder killed -9, next run takes over", recovered=took_over)


def test_take_over_flag_runs_on_a_live_holders_session(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    with ThreadedReplayServer(models=["m"]) as server:
        server.add(ScriptedResponse.from_message("created"), session=SESSION)
        assert run(server.base_url, project, "create").wait(WAIT) == 0
        holder = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve().parents[1] / "store" / "store_child_holder.py"),
             str(paths.db_path()), session_id(project)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        )  # fmt: skip
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
            server.add(ScriptedResponse.from_message("ran anyway"), session=SESSION)
            forced = run(server.base_url, project, "forced", "--take-over")
            out, err = forced.communicate(timeout=WAIT)
            assert forced.returncode == 0, err
            notes = json.loads(out)["notes"]
            assert any(f"taken over from pid {holder.pid}" in n and "--take-over" in n for n in notes)
        finally:
            holder.kill()
            holder.communicate(timeout=WAIT)
    record("--take-over of a live holder's session", recovered=True)


def test_a_run_that_lost_its_session_to_a_take_over_names_it(tmp_path: Path) -> None:
    """Fresh-user finding: the run whose session another run took over (``--take-over``) said only that
    "another process wrote to this session"; it names the session (and its id), who took it and how
    to go on, on stderr and in ``--json`` notes."""
    project = tmp_path / "proj"
    project.mkdir()
    with ThreadedReplayServer(models=["m"]) as server:
        url = server.base_url
        server.add(ScriptedResponse.from_message("created"), session=SESSION)
        assert run(url, project, "create").wait(WAIT) == 0
        sid = session_id(project)
        hit, release = threading.Event(), threading.Event()

        async def gate(i: int) -> None:
            if i == 1:
                hit.set()
                await asyncio.to_thread(release.wait, WAIT)  # until the take-over is done

        held = ScriptedResponse.from_message("a reply that goes on after the take-over", chunk_size=4)
        held.before_read = gate
        server.add(held, session=SESSION)
        holder = run(url, project, "long prompt")
        try:
            assert hit.wait(WAIT), "the first run never reached the stream"
            server.add(ScriptedResponse.from_message("mine now"), session=SESSION)
            taker = run(url, project, "take it", "--take-over")
            out, err = taker.communicate(timeout=WAIT)
            assert taker.returncode == 0, err
        finally:
            release.set()
        out, err = holder.communicate(timeout=WAIT)
    assert holder.returncode != 0
    said = f"session {SESSION!r} (id {sid}) was taken over by another process"
    assert said in err and f"paragents run --session {SESSION}" in err
    assert any(said in note for note in json.loads(out)["notes"])
    assert "Traceback" not in err


def session_id(project: Path) -> str:
    from paragents.store import Store

    async def find() -> str:
        async with await Store.open(paths.db_path()) as store:
            rec = await store.sessions.find(project, SESSION)
            assert rec is not None
            return rec.id

    return asyncio.run(find())


def test_run_json_keeps_a_reply_that_broke_off_marked_incomplete(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    with ThreadedReplayServer(models=["m"]) as server:
        server.add(
            ScriptedResponse(reads=['data: {"choices":[{"index":0,"delta":{"content":"Partial ans"}}]}\n\n']),
            session=SESSION,
        )
        proc = run(server.base_url, project, "question")
        out, err = proc.communicate(timeout=WAIT)
    result = json.loads(out)
    assert proc.returncode == 3, err
    assert result["status"] == "failed" and result["error"]["kind"] == "protocol"
    assert result["messages"][-1] == {"role": "assistant", "content": "Partial ans", "incomplete": True}
    assert result["notes"] == ["the reply broke off: partial text kept and marked incomplete"]
    record("reply broke off mid-stream (run --json keeps it, incomplete)", recovered=True)
