"""``paragents run`` and ``paragents sessions`` as real subprocesses against a loopback replay server."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from paragents.llm.replay import ScriptedResponse, ThreadedReplayServer
from tests.cli.headless import paragents, run_json


@pytest.fixture
def server() -> Iterator[ThreadedReplayServer]:
    with ThreadedReplayServer(models=["m"]) as srv:
        yield srv


def test_run_json_completes_and_is_persisted(server: ThreadedReplayServer, tmp_path: Path) -> None:
    server.add(
        ScriptedResponse.from_message(
            content="Hello!", usage={"prompt_tokens": 20, "completion_tokens": 2, "total_tokens": 22}
        ),
        session="demo",
    )
    code, out = run_json(server, tmp_path, "--session", "demo")
    assert code == 0
    assert out["session"] == "demo" and out["status"] == "completed" and out["error"] is None
    assert out["messages"] == [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello!"}]
    assert out["usage"] == {"prompt_tokens": 20, "completion_tokens": 2, "total_tokens": 22}
    shown = paragents("sessions", "show", "demo", cwd=tmp_path)
    assert shown.returncode == 0 and "Hello!" in shown.stdout
    exported = json.loads(paragents("sessions", "export", "demo", "--format", "json", cwd=tmp_path).stdout)
    assert [m["content"] for m in exported["messages"]] == ["hi", "Hello!"]
    listed = paragents("sessions", "list", cwd=tmp_path)
    assert "demo" in listed.stdout


def test_session_flag_continues_the_same_history(server: ThreadedReplayServer, tmp_path: Path) -> None:
    server.add(ScriptedResponse.from_message(content="one"), session="s")
    server.add(ScriptedResponse.from_message(content="two"), session="s")
    assert run_json(server, tmp_path, "--session", "s", prompt="first")[0] == 0
    code, out = run_json(server, tmp_path, "--session", "s", prompt="second")
    assert code == 0 and [m["content"] for m in out["messages"]] == ["second", "two"]
    sent = server.requests[-1].body_json["messages"]
    assert [m["content"] for m in sent[1:]] == ["first", "one", "second"]


def test_each_run_without_session_gets_its_own_session(server: ThreadedReplayServer, tmp_path: Path) -> None:
    server.add([ScriptedResponse.from_message(content="one"), ScriptedResponse.from_message(content="two")])
    code1, out1 = run_json(server, tmp_path, prompt="first")
    code2, out2 = run_json(server, tmp_path, prompt="second")
    assert (code1, code2) == (0, 0)
    assert out1["session"] == "run-1" and out2["session"] == "run-2"
    sent = server.requests[-1].body_json["messages"]
    assert [m["content"] for m in sent[1:]] == ["second"]  # nothing of the first run


def test_continue_flag_continues_the_most_recent_run_session(
    server: ThreadedReplayServer, tmp_path: Path
) -> None:
    server.add([ScriptedResponse.from_message(content=c) for c in ("one", "two", "three")])
    run_json(server, tmp_path, prompt="first")
    run_json(server, tmp_path, prompt="second")
    code, out = run_json(server, tmp_path, "--continue", prompt="third")
    assert code == 0 and out["session"] == "run-2"
    sent = server.requests[-1].body_json["messages"]
    assert [m["content"] for m in sent[1:]] == ["second", "two", "third"]
    proc = paragents("run", "--continue", "--session", "x", "hi", cwd=tmp_path, stdin="")
    assert proc.returncode == 2 and "not allowed with" in proc.stderr


def test_ask_without_a_terminal_becomes_a_denial_with_the_reason(
    server: ThreadedReplayServer, tmp_path: Path
) -> None:
    call = {"id": "c1", "name": "write_file", "arguments": json.dumps({"path": "f.txt", "content": "x"})}
    server.add(ScriptedResponse.from_message(tool_calls=[call]), session="run-1")
    server.add(ScriptedResponse.from_message(content="could not write"), session="run-1")
    code, out = run_json(server, tmp_path)
    assert code == 0
    tool = next(m for m in out["messages"] if m["role"] == "tool")
    assert "no terminal" in tool["content"] and "denied" in tool["content"]
    assert not (tmp_path / "f.txt").exists()


def test_mode_flag_lets_edits_run_headless(server: ThreadedReplayServer, tmp_path: Path) -> None:
    call = {"id": "c1", "name": "write_file", "arguments": json.dumps({"path": "f.txt", "content": "x"})}
    server.add(ScriptedResponse.from_message(tool_calls=[call]), session="run-1")
    server.add(ScriptedResponse.from_message(content="written"), session="run-1")
    code, _out = run_json(server, tmp_path, "--mode", "acceptEdits")
    assert code == 0 and (tmp_path / "f.txt").read_text() == "x"


@pytest.mark.parametrize(
    ("response", "code", "kind"),
    [
        (
            ScriptedResponse(
                status=401,
                headers={"content-type": "application/json"},
                reads=['{"error": {"message": "bad key"}}'],
            ),
            2,
            "auth",
        ),
        (ScriptedResponse(reads=["data: not json at all\n\n"]), 3, "protocol"),
        (ScriptedResponse(status=500, reads=["boom"]), 1, "server"),
    ],
)
def test_exit_codes_follow_the_error_kind(
    server: ThreadedReplayServer, tmp_path: Path, response: ScriptedResponse, code: int, kind: str
) -> None:
    server.add(response, session="run-1")
    got, out = run_json(server, tmp_path, "--max-turns", "1")
    assert got == code
    assert out["status"] == "failed" and out["error"]["kind"] == kind and out["error"]["message"]


def test_no_config_and_no_endpoint_says_what_to_do(tmp_path: Path) -> None:
    proc = paragents("run", "hello", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--endpoint" in proc.stderr and "Traceback" not in proc.stderr


def test_bad_arguments_are_one_line_errors(tmp_path: Path) -> None:
    proc = paragents(
        "run", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--max-turns", "0", "x", cwd=tmp_path
    )
    assert proc.returncode == 2 and "--max-turns" in proc.stderr and "Traceback" not in proc.stderr
    proc = paragents("run", "--endpoint", "not a url", "--model", "m", "x", cwd=tmp_path)
    assert proc.returncode == 2 and "base_url" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.real_model
@pytest.mark.skipif(
    not os.environ.get("PARAGENTS_REAL_ENDPOINT"),
    reason="PARAGENTS_REAL_ENDPOINT is not set (start ../shared/tools/local-model)",
)
def test_real_model_completion_is_returned_and_persisted(tmp_path: Path) -> None:
    """Runs only when PARAGENTS_REAL_ENDPOINT names a live OpenAI-compatible server (e.g. local-model)."""
    endpoint = os.environ["PARAGENTS_REAL_ENDPOINT"]
    model = os.environ.get("PARAGENTS_REAL_MODEL", "smollm2")
    proc = paragents(
        "run",
        "--endpoint",
        endpoint,
        "--model",
        model,
        "--no-tools",
        "--json",
        "--session",
        "real",
        "Name one colour.",
        cwd=tmp_path,
        stdin="",
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["status"] == "completed"
    reply = out["messages"][-1]
    assert reply["role"] == "assistant" and reply["content"].strip()
    exported = json.loads(paragents("sessions", "export", "real", "--format", "json", cwd=tmp_path).stdout)
    assert exported["messages"][-1]["content"] == reply["content"]


def test_a_terminal_ask_prints_the_command_its_cwd_and_the_rule_as_plain_text() -> None:
    import asyncio
    import io

    from rich.console import Console

    from paragents import events as ev
    from paragents.cli.run import print_preview
    from paragents.models import CallPreview, ToolCall

    loop = asyncio.new_event_loop()
    try:
        event = ev.PermissionRequested(
            "s1", "r1", ToolCall("c1", "run_command", "{}"), "run_command rm", "why", (),
            loop.create_future(), CallPreview("command", "rm -rf [bold]x[/bold]", "bash -c", cwd="/p/web"),
            "Bash(rm *)", "project",
        )  # fmt: skip
    finally:
        loop.close()
    out = Console(file=io.StringIO(), width=120, color_system=None)
    print_preview(out, event)
    text = out.file.getvalue()  # type: ignore[attr-defined]
    assert "rule: Bash(rm *) (project)" in text and "in /p/web" in text
    assert "$ rm -rf [bold]x[/bold]" in text


def test_run_prints_the_models_text_without_its_escape_sequences(
    server: ThreadedReplayServer, tmp_path: Path
) -> None:
    """A reply holding an OSC title change, an OSC 52 clipboard write and CSI colours reaches the
    terminal as plain text: no ESC byte gets through (found by a fresh user under a tty), and markup
    stays literal."""
    hostile = (
        "Done [/] [bold]x[/bold] \x1b]0;PWNED-TITLE\x07 \x1b]52;c;cHduZWQ=\x07 \x1b[31mred\x1b[0m \x9b2J"
    )
    server.add(ScriptedResponse.from_message(content=hostile, reasoning_content="\x1b[5mblink\x1b[0m"))
    proc = paragents("run", "--endpoint", server.base_url, "--model", "m", "hi", cwd=tmp_path, stdin="")
    assert proc.returncode == 0, proc.stderr
    printed = proc.stdout + proc.stderr
    assert "\x1b" not in printed and "\x9b" not in printed and "\x07" not in printed
    assert "Done [/] [bold]x[/bold]" in proc.stdout and "red" in proc.stdout and "blink" in proc.stdout
    assert "PWNED-TITLE" not in printed and "cHduZWQ" not in printed  # whole sequences, not just ESC
