"""The fresh user's case end to end: two ``paragents run`` processes at once against a server that
runs one request at a time and drops the running request when another arrives (the bytes measured
against llama-cpp-python's server, tests/scripted.py ``cut_by_next_request``). Before the fix the
dropped one ended ``status: completed`` with an empty reply and the advice "/model NAME"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from paragents.llm.replay import ScriptedResponse, ThreadedReplayServer
from tests.patience import HANG_GUARD_S
from tests.scripted import cut_by_next_request, posts


@pytest.fixture
def server() -> Iterator[ThreadedReplayServer]:
    with ThreadedReplayServer(models=["m"]) as srv:
        yield srv


def start_run(server: ThreadedReplayServer, cwd: Path, session: str) -> subprocess.Popen[str]:
    args = [
        "run",
        "--endpoint",
        server.base_url,
        "--model",
        "m",
        "--json",
        "--session",
        session,
        "say a word",
    ]
    return subprocess.Popen(
        [sys.executable, "-m", "paragents.cli", *args],
        cwd=cwd,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_two_runs_at_once_against_a_one_slot_server_both_answer(
    server: ThreadedReplayServer, tmp_path: Path
) -> None:
    server.add(
        [cut_by_next_request(posts(server.server, 2)), ScriptedResponse.from_message("one")], session="a"
    )
    server.add(ScriptedResponse.from_message("two"), session="b")
    first = start_run(server, tmp_path, "a")
    server.wait_for_requests(1, timeout=HANG_GUARD_S)  # a's request is running when b's arrives
    second = start_run(server, tmp_path, "b")
    outs = {}
    for name, proc in (("a", first), ("b", second)):
        stdout, stderr = proc.communicate(timeout=HANG_GUARD_S)
        assert proc.returncode == 0 and "Traceback" not in stderr, stderr
        outs[name] = json.loads(stdout)
    assert outs["a"]["status"] == "completed" and outs["a"]["messages"][-1]["content"] == "one"
    assert outs["b"]["status"] == "completed" and outs["b"]["messages"][-1]["content"] == "two"
    assert any(n.startswith("the server dropped the request, retrying in") for n in outs["a"]["notes"])
    assert not any("empty reply" in n for out in outs.values() for n in out["notes"])
    assert [r.session for r in server.requests if r.method == "POST"] == ["a", "b", "a"]
