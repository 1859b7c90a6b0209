"""kill -9 loop: a real ``python -m paragents.cli run`` subprocess against a ThreadedReplayServer,
SIGKILLed at seeded points of a scripted multi-turn session with tool calls (read_file, write_file,
run_command), then checked: nothing stored before is lost, the next request the engine sends is
valid for the provider and carries exactly the repaired stored history, and the killed turn shows
as interrupted.

Kill points (one per run, drawn from the seed): before read ``j`` of scripted response ``k`` (the
server's ``before_read`` hook signals the test: mid-stream, or right after request ``k`` arrived);
while ``run_command`` runs (the command writes to a FIFO the test waits on: mid-tool); or after a
random delay (startup, mid-write to the store, between steps)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import select
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from paragents import paths
from paragents.llm.replay import ThreadedReplayServer
from paragents.llm.replay_script import ScriptedResponse
from paragents.store import INTERRUPTED_RESULT, Store, repair_history
from tests.faults.tally import record
from tests.faults.validity import request_problems
from tests.patience import HANG_GUARD_S

SEED = int(os.environ.get("PARAGENTS_FAULT_SEED", "20250607"))
KILLS = 50
SESSION = "crashy"
WAIT = HANG_GUARD_S
"""Upper bound (seconds) on any wait for a kill point; a run that never reaches it fails the test."""


def script(i: int, command: str) -> list[ScriptedResponse]:
    """The model's three replies of run ``i``: read+write, a command, a final answer."""
    return [
        ScriptedResponse.from_message(
            f"run {i}: reading notes and writing out{i}.txt",
            tool_calls=[
                {"id": f"c{i}read", "name": "read_file", "arguments": json.dumps({"path": "notes.txt"})},
                {
                    "id": f"c{i}write",
                    "name": "write_file",
                    "arguments": json.dumps({"path": f"out{i}.txt", "content": f"output of run {i}\n" * 20}),
                },
            ],
            chunk_size=7,
        ),
        ScriptedResponse.from_message(
            f"run {i}: running a command",
            tool_calls=[
                {"id": f"c{i}cmd", "name": "run_command", "arguments": json.dumps({"command": command})}
            ],
            chunk_size=7,
        ),
        ScriptedResponse.from_message(f"run {i}: all done, nothing else to do", chunk_size=7),
    ]


def finished_replies(upto: int) -> set[str]:
    """Every finished assistant text of runs 0..``upto`` (a partial reply is none of them)."""
    texts: set[str] = set()
    for i in range(upto + 1):
        texts |= {
            f"run {i}: reading notes and writing out{i}.txt",
            f"run {i}: running a command",
            f"run {i}: all done, nothing else to do",
        }
    return texts


def store_state() -> tuple[dict[int, str], list[dict[str, Any]], Any]:
    """Return (complete stored messages id -> JSON, repaired history, session record or None)."""

    async def read() -> tuple[dict[int, str], list[dict[str, Any]], Any]:
        db = paths.db_path()
        if not db.exists():
            return {}, [], None
        async with await Store.open(db) as store:
            sessions = [s for s in await store.sessions.all(None) if s.name == SESSION]
            if not sessions:
                return {}, [], None
            stored = await store.messages.load(sessions[0].id)
            complete = {m.id: json.dumps(m.message, sort_keys=True) for m in stored if m.complete}
            return complete, repair_history(stored).messages, sessions[0]

    return asyncio.run(read())


def turns() -> list[Any]:
    async def read() -> list[Any]:
        async with await Store.open(paths.db_path()) as store:
            (session,) = [s for s in await store.sessions.all(None) if s.name == SESSION]
            return await store.turns.all(session.id)

    return asyncio.run(read())


def launch(url: str, project: Path, prompt: str) -> subprocess.Popen[str]:
    argv = [
        sys.executable, "-m", "paragents.cli", "run", "--session", SESSION, "--endpoint", url,
        "--model", "m", "--dir", str(project), "--mode", "acceptEdits",
        "--allow", "Bash(echo *)", "--allow", "Bash(sleep *)", prompt,
    ]  # fmt: skip
    return subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ), cwd=project,
    )  # fmt: skip


def test_kill_minus_nine_loop_loses_nothing_and_sends_valid_histories(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    project = tmp_path / "proj"
    project.mkdir()
    (project / "notes.txt").write_text("the notes the model reads\n")
    # a window large enough that automatic compaction never starts: each request must carry the
    # stored history verbatim, which is what this test checks
    (project / "runtime_config.json").write_text(json.dumps({"default_context_window": 10_000_000}))
    fifo = project / "tool-started.fifo"
    os.mkfifo(fifo)
    kills = runs = lost_total = recovered = 0
    killed_prompts: set[str] = set()
    listed_interrupted = 0
    by_point: dict[str, list[int]] = {}
    try:
        for i in range(KILLS * 2):
            if kills >= KILLS:
                break
            point = rng.choice(["stream", "stream", "request", "tool", "delay"])
            command = f"echo run {i} > {fifo.name} && sleep 3" if point == "tool" else f"echo run {i}"
            responses = script(i, command)
            before, expected_history, _ = store_state()
            hit = threading.Event()
            where = ""
            if point in ("stream", "request"):
                k = rng.randrange(len(responses))
                j = 0 if point == "request" else rng.randrange(1, len(responses[k].reads))
                where = f"response {k} read {j}"

                async def gate(n: int, j: int = j, hit: threading.Event = hit) -> None:
                    if n == j:
                        hit.set()
                        await asyncio.Event().wait()  # never sends the rest: the kill comes first

                responses[k].before_read = gate
            server = ThreadedReplayServer(models=["m"])
            url = server.start()
            try:
                server.add(responses, session=SESSION)
                # a fresh read end per run (a FIFO reports EOF forever once its last writer left)
                fifo_fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK) if point == "tool" else -1
                proc = launch(url, project, f"prompt {i}")
                try:
                    if point in ("stream", "request"):
                        assert hit.wait(WAIT), f"run {i} never reached {where}"
                    elif point == "tool":
                        ready, _, _ = select.select([fifo_fd], [], [], WAIT)
                        assert ready, f"run {i} never started run_command"
                        assert os.read(fifo_fd, 4096).decode().startswith(f"run {i}")
                        where = "inside run_command"
                    else:
                        delay = rng.uniform(0.05, 1.6)
                        where = f"after {delay:.2f} s"
                        with contextlib.suppress(subprocess.TimeoutExpired):
                            proc.wait(timeout=delay)  # fault injection timing, not synchronisation
                    killed = proc.poll() is None
                    if killed:
                        os.kill(proc.pid, signal.SIGKILL)
                    _out, err = proc.communicate(timeout=WAIT)
                    if killed and proc.returncode == 0:
                        killed = False  # it exited on its own between poll() and the signal
                finally:
                    if proc.poll() is None:
                        proc.kill()
                        proc.wait()
                    if fifo_fd >= 0:
                        os.close(fifo_fd)
            finally:
                server.stop()
            runs += 1
            assert "Traceback" not in err, err
            if killed:
                kills += 1
                killed_prompts.add(f"prompt {i}")
                by_point.setdefault(point, []).append(i)
                assert proc.returncode == -signal.SIGKILL
            else:
                assert proc.returncode == 0, f"run {i} failed: {err}"

            # the requests this run sent: valid, and the first one carries the stored history exactly
            posts = [r.body_json for r in server.requests if r.method == "POST"]
            for body in posts:
                assert request_problems(body, finished_replies(i)) == [], (i, where)
            if posts:
                sent = posts[0]["messages"]
                assert sent[1:-1] == expected_history, (
                    f"run {i}: first request differs from the stored history"
                )
                assert sent[-1] == {"role": "user", "content": f"prompt {i}"}

            # nothing complete that was stored before is gone
            after, _history, rec = store_state()
            lost = sum(1 for mid, text in before.items() if after.get(mid) != text)
            lost_total += lost
            assert lost == 0, f"run {i} (killed {where}) lost {lost} message(s)"
            if killed and rec is not None and rec.state == "running" and listed_interrupted < 2:
                assert rec.pid == proc.pid
                listing = subprocess.run(
                    [sys.executable, "-m", "paragents.cli", "sessions", "list", "--dir", str(project)],
                    capture_output=True, text=True, env={**os.environ, "COLUMNS": "250"}, timeout=WAIT,
                    check=True, stdin=subprocess.DEVNULL,
                )  # fmt: skip
                row = next(line for line in listing.stdout.splitlines() if SESSION in line)
                assert "interrupted" in row and "running" not in row, row
                listed_interrupted += 1
            recovered += int(killed)

        # one last run, not killed: it recovers the last kill and completes with a valid request
        server = ThreadedReplayServer(models=["m"])
        url = server.start()
        try:
            _, expected_history, _ = store_state()
            server.add(script(10_000, "echo final"), session=SESSION)
            final = launch(url, project, "final prompt")
            _out, err = final.communicate(timeout=HANG_GUARD_S)
        finally:
            server.stop()
        assert final.returncode == 0, err
        posts = [r.body_json for r in server.requests if r.method == "POST"]
        assert len(posts) == 3
        assert posts[0]["messages"][1:-1] == expected_history
        assert all(request_problems(b, finished_replies(10_000)) == [] for b in posts)

        # every turn of a killed process is recorded as interrupted; none is left running
        all_turns = turns()
        assert all(t.status != "running" for t in all_turns)
        dead = [t for t in all_turns if t.prompt in killed_prompts]  # by prompt: pids can be reused
        # A kill that lands after the turn was recorded complete (while the process shuts down) leaves
        # an honest "completed"; any other end state of a killed run's turn is wrong.
        wrong = [
            (t.id, t.status, t.pid, t.error) for t in dead if t.status not in ("interrupted", "completed")
        ]
        assert dead and not wrong, wrong
        assert any(t.status == "interrupted" for t in dead)
        # the kills hit every kind of point, and some interrupted tool calls were answered for the provider
        assert set(by_point) == {"stream", "request", "tool", "delay"}, by_point
        assert listed_interrupted >= 1
        assert any(m.get("content") == INTERRUPTED_RESULT for m in posts[0]["messages"])
    finally:
        record("kill -9 (paragents run subprocess)", recovered=True, lost=lost_total, runs=recovered)
        if kills > recovered:
            record("kill -9 (paragents run subprocess)", recovered=False, runs=kills - recovered)
        if runs > kills:
            record("run finished before its kill point", recovered=True, runs=runs - kills)
    assert kills >= KILLS
