"""Record -> replay round trip: a live run recorded (in process, and through `paragents run --record`
in a subprocess) replays to the same final state; keys never reach the cassette file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from paragents import events as ev
from paragents.cassette import play_cassette, report_ok, validate_cassette
from paragents.cassette.recorder import CassetteRecorder
from paragents.events import PermissionAnswer
from paragents.llm.replay import ReplayServer, ScriptedResponse, ThreadedReplayServer
from paragents.sessions import Runtime
from tests.patience import HANG_GUARD_S

KEY = "sk-test-RECORDSECRET-0123456789"
REPO = Path(__file__).parent.parent.parent


def msg(content: str | None = None, calls: list[dict[str, str]] | None = None) -> ScriptedResponse:
    return ScriptedResponse.from_message(content, tool_calls=calls)


def comparable(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {k: v for k, v in m.items() if k in ("role", "content", "tool_calls", "tool_call_id")}
        for m in messages
    ]


async def test_recorded_multi_session_run_replays_to_the_same_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PARAGENTS_API_KEY", KEY)
    project = tmp_path / "proj"
    project.mkdir()
    (project / "notes.txt").write_text("first line\n")
    (project / "unrelated.txt").write_text("never read\n")
    async with ReplayServer(models=["m"]) as server:
        server.add(
            [
                msg("Reading.", [{"id": "c1", "name": "read_file", "arguments": '{"path": "notes.txt"}'}]),
                msg(
                    None,
                    [
                        {
                            "id": "c2",
                            "name": "write_file",
                            "arguments": '{"path": "notes.txt", "content": "new\\n"}',
                        }
                    ],
                ),
                msg("Rewrote notes.txt."),
            ],
            session="a",
        )
        server.add(
            [
                ScriptedResponse(
                    status=503, headers={"Retry-After": "0"}, reads=['{"error": {"message": "busy"}}']
                ),
                msg("Hello from b."),
            ],
            session="b",
        )
        recorder = CassetteRecorder()
        runtime = await Runtime.create(
            project,
            cli_overrides={"base_url": server.base_url, "model": "m", "max_retries": 2},
            db_path=tmp_path / "state" / "db.sqlite",
            recorder=recorder,
        )

        def sink(event: ev.Event) -> None:
            if isinstance(event, ev.PermissionRequested):
                event.reply.set_result(PermissionAnswer("allow_once"))

        runtime.set_sink(sink)
        a = await runtime.new_session("a")
        b = await runtime.new_session("b")
        runtime.submit(a.id, "rewrite the notes")
        runtime.submit(b.id, "say hello")
        await runtime.wait_idle()
        live = {"a": comparable(a.messages), "b": comparable(b.messages)}
        assert server.requests[0].headers.get("authorization") == f"Bearer {KEY}"
        await runtime.shutdown()
    path = recorder.save(tmp_path / "run.cassette.json")
    text = path.read_text("utf-8")
    assert KEY not in text
    assert "authorization" not in text.lower()
    data = json.loads(text)
    assert data["workspace"] == {"notes.txt": "first line\n"}
    assert data["answers"] == [
        {"session": "a", "tool": "write_file", "path": "notes.txt", "answer": "allow_once"}
    ]
    assert [s["prompts"] for s in data["sessions"]] == [["rewrite the notes"], ["say hello"]]
    assert data["sessions"][1]["replies"][0]["status"] == 503
    report = await play_cassette(validate_cassette(data, str(path)), timeout=HANG_GUARD_S)
    assert report_ok(report), report
    for s in report["sessions"]:
        assert comparable(s["messages"]) == live[s["name"]]
    assert report["files"] == {"notes.txt": "new\n"}


def test_paragents_run_record_writes_a_cassette_that_replays(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "a.txt").write_text("alpha\n")
    cassette = tmp_path / "out.json"
    env = {**os.environ, "PYTHONPATH": str(REPO), "PARAGENTS_API_KEY": KEY}
    with ThreadedReplayServer(models=["m"]) as server:
        server.add(
            [
                msg(None, [{"id": "r1", "name": "read_file", "arguments": '{"path": "a.txt"}'}]),
                msg(
                    None,
                    [{"id": "w1", "name": "write_file", "arguments": '{"path": "b.txt", "content": "b"}'}],
                ),
                msg("I could read a.txt but not write b.txt."),
            ],
            session="run-1",
        )
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "paragents.cli",
                "run",
                "--dir",
                str(project),
                "--endpoint",
                server.base_url,
                "--model",
                "m",
                "--json",
                "--record",
                str(cassette),
                "copy a to b",
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=HANG_GUARD_S,
            stdin=subprocess.DEVNULL,
        )
    assert proc.returncode == 0, proc.stderr
    live = json.loads(proc.stdout)
    text = cassette.read_text("utf-8")
    assert KEY not in text
    data = json.loads(text)
    assert data["answers"][0]["answer"] == "reject_once"
    replayed = subprocess.run(
        [sys.executable, "-m", "paragents.cli", "replay", str(cassette), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=HANG_GUARD_S,
    )
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    report = json.loads(replayed.stdout)
    live_messages = json.loads(json.dumps(live["messages"]).replace(str(project.resolve()), "<workspace>"))
    assert comparable(report["sessions"][0]["messages"]) == comparable(live_messages)
