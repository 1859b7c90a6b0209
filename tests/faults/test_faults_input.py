"""Bad input: config and permission files, command-line arguments, malformed tool arguments from the
model, and very large tool outputs. Each gives one readable line (exit 2) or an error tool message;
nothing crashes and no traceback is printed."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from paragents import events as ev
from paragents.cli import main
from paragents.llm.replay import ReplayServer, ScriptedResponse
from paragents.sessions.runtime import Runtime
from tests.faults.tally import record
from tests.faults.validity import request_problems
from tests.trusting import trusted

BAD_CONFIGS: list[tuple[str, Any, tuple[str, ...]]] = [
    ("unknown key", {"base_urll": "http://127.0.0.1:1/v1"},
     ("runtime_config.json", "base_urll", "known keys")),
    ("wrong type", {"max_retries": "three"}, ("runtime_config.json", "max_retries", "integer")),
    ("bad url", {"base_url": "localhost:8080"}, ("runtime_config.json", "base_url", "http://127.0.0.1:8080/v1")),
    ("missing key env var", {"model": "m", "api_key_env": "PARAGENTS_FAULT_NO_SUCH_VAR"},
     ("api_key_env", "PARAGENTS_FAULT_NO_SUCH_VAR", "export it")),
    ("json syntax", '{"model": "m",,}', ("runtime_config.json", "line 1", "not valid JSON")),
    ("not an object", "[1, 2]", ("runtime_config.json", "JSON object")),
    ("negative timeout", {"read_timeout": -1}, ("runtime_config.json", "read_timeout", "greater than 0")),
]  # fmt: skip

BAD_PERMISSIONS: list[tuple[str, str, tuple[str, ...]]] = [
    ("json syntax", "{oops", ("permissions.json", "not valid JSON", "line 1")),
    ("rules not a list", '{"permissions": {"allow": "Bash(ls)"}}', ("permissions.json", "permissions.allow")),
    ("unclosed rule", '{"permissions": {"allow": ["Bash(ls"]}}', ("permissions.json", "allow[0]", "')'")),
    ("unknown key", '{"permissions": {"allw": []}}', ("permissions.json", "allw")),
    ("unknown mode", '{"permissions": {"defaultMode": "yolo"}}',
     ("permissions.json", "defaultMode", "acceptEdits")),
]  # fmt: skip


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Run ``paragents`` in-process; return (exit code, stderr). argparse errors exit via SystemExit."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    err = capsys.readouterr().err
    return code, err


def assert_one_readable_line(err: str, words: tuple[str, ...]) -> None:
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line, got: {err!r}"
    for word in words:
        assert word in lines[0], f"{word!r} not in {lines[0]!r}"


@pytest.mark.parametrize(("case", "content", "words"), BAD_CONFIGS, ids=[c[0] for c in BAD_CONFIGS])
def test_bad_runtime_config_is_one_line_exit_2(
    case: str, content: Any, words: tuple[str, ...], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "runtime_config.json").write_text(
        content if isinstance(content, str) else json.dumps(content)
    )
    trusted(tmp_path)  # the user's own file (api_key_env needs trust): the error is the one we test
    code, err = run_cli(["run", "--dir", str(tmp_path), "--model", "m", "hi"], capsys)
    ok = code == 2
    record(f"bad input: runtime_config {case}", recovered=ok)
    assert code == 2
    assert_one_readable_line(err, words)


@pytest.mark.parametrize("scope", ["project", "user"])
@pytest.mark.parametrize(("case", "content", "words"), BAD_PERMISSIONS, ids=[c[0] for c in BAD_PERMISSIONS])
def test_bad_permission_file_is_one_line_exit_2(
    case: str,
    content: str,
    words: tuple[str, ...],
    scope: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    folder = project if scope == "project" else Path(os.environ["PARAGENTS_CONFIG_DIR"])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "permissions.json").write_text(content)
    argv = ["run", "--dir", str(project), "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "hi"]
    code, err = run_cli(argv, capsys)
    record(f"bad input: {scope} permissions {case}", recovered=code == 2)
    assert code == 2
    assert_one_readable_line(err, (str(folder / "permissions.json"), *words))


@pytest.mark.parametrize(
    ("case", "args", "words"),
    [
        ("max-turns 0", ["--max-turns", "0"], ("--max-turns", "at least 1")),
        ("max-turns not a number", ["--max-turns", "many"], ("--max-turns", "invalid int")),
        ("unknown mode", ["--mode", "yolo"], ("--mode", "invalid choice", "acceptEdits")),
        ("missing --dir", ["--dir", "/nonexistent/paragents-fault"], ("--dir", "not a directory")),
        ("--dir is a file", ["--dir", "FILE"], ("--dir", "not a directory")),
    ],
)
def test_bad_command_line_arguments_exit_2(
    case: str, args: list[str], words: tuple[str, ...], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "afile").write_text("x")
    args = [str(tmp_path / "afile") if a == "FILE" else a for a in args]
    code, err = run_cli(["run", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", *args, "hi"], capsys)
    record(f"bad input: cli {case}", recovered=code == 2)
    assert code == 2
    assert "Traceback" not in err
    last = [line for line in err.splitlines() if line.strip()][-1]  # argparse puts its usage line first
    for word in words:
        assert word in last, f"{word!r} not in {last!r}"


# -- the model's tool calls ----------------------------------------------------------------------------
@pytest.fixture
async def replay() -> AsyncIterator[ReplayServer]:
    async with ReplayServer(models=["m"]) as server:
        yield server


async def runtime(replay: ReplayServer, tmp_path: Path, **overrides: Any) -> tuple[Runtime, list[ev.Event]]:
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    cfg = {"base_url": replay.base_url, "model": "m", "max_retries": 0, **overrides}
    rt = await Runtime.create(project, cli_overrides=cfg, db_path=tmp_path / "db.sqlite")
    events: list[ev.Event] = []
    rt.set_sink(events.append)
    return rt, events


HUGE = "a" * (1024 * 1024)
BAD_CALLS = [
    ("not JSON", "read_file", '{"path": "notes.txt"'),
    ("not an object", "read_file", '["notes.txt"]'),
    ("wrong type", "read_file", json.dumps({"path": 5})),
    ("wrong type (write)", "write_file", json.dumps({"path": "f.txt", "content": {"x": 1}})),
    ("missing argument", "edit_file", json.dumps({"path": "notes.txt"})),
    ("unknown argument", "list_dir", json.dumps({"path": ".", "recursive": True})),
    ("NUL in path", "read_file", json.dumps({"path": "notes\x00.txt"})),
    ("NUL in command", "run_command", json.dumps({"command": "ls\x00 -la"})),
    ("1 MB path", "read_file", json.dumps({"path": HUGE})),
    ("1 MB argument name", "read_file", json.dumps({HUGE: 1})),
    ("1 MB JSON garbage", "read_file", "{" + HUGE),
    ("unknown tool", "no_such_tool", "{}"),
]


async def test_malformed_tool_arguments_become_error_results(replay: ReplayServer, tmp_path: Path) -> None:
    rt, events = await runtime(replay, tmp_path)
    try:
        (rt.project_dir / "notes.txt").write_text("notes\n")
        view = await rt.lifecycle.new_session("s", mode="bypassPermissions")
        calls = [
            {"id": f"bad{i}", "name": name, "arguments": args} for i, (_, name, args) in enumerate(BAD_CALLS)
        ]
        replay.add(ScriptedResponse.from_message("trying tools", tool_calls=calls, chunk_size=4096))
        replay.add(ScriptedResponse.from_message("the loop survived"))
        rt.submit(view.id, "go")
        await asyncio.wait_for(rt.wait_idle(view.id), 30)
        finished = {e.call.id: e for e in events if isinstance(e, ev.ToolCallFinished)}
        ends = [e for e in events if isinstance(e, ev.TurnFinished)]
        assert [e.status for e in ends] == ["completed"]
        assert view.messages[-1] == {"role": "assistant", "content": "the loop survived"}
        body = replay.requests[1].body_json
        assert request_problems(body, {"trying tools", "the loop survived"}) == []
        results = {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}
        for i, (case, _name, _args) in enumerate(BAD_CALLS):
            event = finished[f"bad{i}"]
            ok = event.status == "error" and results[f"bad{i}"] == event.output and len(event.output) < 2000
            record(f"bad tool args: {case}", recovered=ok)
            assert event.status == "error", (case, event.output[:200])
            assert len(event.output) < 2000, f"{case}: the error quotes too much ({len(event.output)} chars)"
        started = {e.call.id for e in events if isinstance(e, ev.ToolCallStarted)}
        assert started <= {"bad8"}, "only the well-formed 1 MB path reaches the tool (and fails there)"
    finally:
        await rt.shutdown()


async def test_large_tool_output_and_files_are_capped_with_a_note(
    replay: ReplayServer, tmp_path: Path
) -> None:
    cap = 5000
    rt, events = await runtime(replay, tmp_path, max_output_chars=cap)
    try:
        project = rt.project_dir
        (project / "big.txt").write_text("".join(f"line {n} " + "x" * 90 + "\n" for n in range(60_000)))
        (project / "oneline.txt").write_text("y" * 3_000_000)
        (project / "many").mkdir()
        for n in range(3000):
            (project / "many" / f"file-with-a-long-name-{n:05}.txt").touch()
        view = await rt.lifecycle.new_session("s", mode="bypassPermissions")
        calls = [
            {"id": "big", "name": "read_file", "arguments": json.dumps({"path": "big.txt"})},
            {"id": "one", "name": "read_file", "arguments": json.dumps({"path": "oneline.txt"})},
            {"id": "cmd", "name": "run_command",
             "arguments": json.dumps({"command": "yes 0123456789 | head -c 4000000"})},
            {"id": "glob", "name": "glob", "arguments": json.dumps({"pattern": "many/*.txt"})},
        ]  # fmt: skip
        replay.add(ScriptedResponse.from_message("reading", tool_calls=calls))
        replay.add(ScriptedResponse.from_message("done"))
        rt.submit(view.id, "go")
        await asyncio.wait_for(rt.wait_idle(view.id), 60)
        body = replay.requests[1].body_json
        results = {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}
        for call_id in ("big", "one", "cmd", "glob"):
            text = results[call_id]
            capped = len(text) <= cap + 300 and any(w in text for w in ("truncated", "omitted", "cut", "…"))
            record(f"large output: {call_id}", recovered=capped)
            assert len(text) <= cap + 300, f"{call_id}: {len(text)} chars sent to the model"
            assert any(w in text for w in ("truncated", "omitted", "cut")), (
                f"{call_id}: no note in {text[-300:]!r}"
            )
        assert [e.status for e in events if isinstance(e, ev.TurnFinished)] == ["completed"]
    finally:
        await rt.shutdown()
