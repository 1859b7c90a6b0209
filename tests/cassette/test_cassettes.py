"""Every cassette under tests/cassette/ replayed through the real engine, plus determinism, bad
cassettes, expect failures, the CLI (one real subprocess) and the record -> replay round trip."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from paragents.cassette import CassetteError, load_cassette, play_cassette, report_ok, validate_cassette
from paragents.cli import main as cli_main
from tests.patience import HANG_GUARD_S

HERE = Path(__file__).parent
CASSETTES = sorted(p for p in HERE.rglob("*.json") if "failing" not in p.parts)
FIXTURES = HERE.parent / "fixtures_shared" / "sse"
REPO = HERE.parent.parent


async def replay(path: Path | str) -> dict[str, Any]:
    return await play_cassette(load_cassette(path), timeout=HANG_GUARD_S)


def session(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in report["sessions"] if s["name"] == name)


def test_there_are_at_least_12_cassettes() -> None:
    assert len(CASSETTES) >= 12


@pytest.mark.parametrize("path", CASSETTES, ids=lambda p: str(p.relative_to(HERE)))
async def test_cassette_replays_and_meets_its_expectations(path: Path) -> None:
    report = await replay(path)
    assert report["replay_errors"] == []
    assert report["expect"] is not None and report["expect"]["ok"], report["expect"]["diff"]
    assert report_ok(report)


@pytest.mark.parametrize("fixture", sorted(FIXTURES.glob("*.json")), ids=lambda p: p.stem)
async def test_sse_fixture_cassette_assembles_what_the_fixture_expects(fixture: Path) -> None:
    expected = json.loads(fixture.read_text("utf-8"))["expected"]
    report = await replay(HERE / "sse" / fixture.name)
    s = session(report, "s")
    assistant = s["messages"][1]
    assert assistant["role"] == "assistant"
    assert (assistant.get("content") or None) == expected["content"]
    assert (assistant.get("reasoning_content") or None) == expected["reasoning"]
    calls = [
        {"id": c["id"], "name": c["function"]["name"], "arguments": c["function"]["arguments"]}
        for c in assistant.get("tool_calls", [])
    ]
    assert calls == expected["tool_calls"]
    if expected["error"]:
        outputs = " ".join(r["output"] for r in s["tool_results"]).lower()
        assert expected["error"] in outputs
        assert all(r["status"] == "error" for r in s["tool_results"])
    ran = [r for r in s["tool_results"] if r["status"] == "ok"]
    if not expected["execute_tools"]:
        assert ran == []


async def test_approvals_are_answered_from_the_cassette() -> None:
    report = await replay(HERE / "two_sessions_interleaved.json")
    api, web = session(report, "api"), session(report, "web")
    assert [(a["tool"], a["answer"]) for a in api["approvals"]] == [("edit_file", "allow_once")]
    # allow_session: the second identical command is not asked again
    assert [(a["tool"], a["answer"]) for a in web["approvals"]] == [("run_command", "allow_session")]
    assert [r["status"] for r in web["tool_results"]] == ["ok", "ok", "ok"]
    assert report["files_changed"][0]["path"] == "src/app.py"
    assert "+    return 2" in report["files_changed"][0]["diff"]


async def test_denials_reach_the_model_and_change_nothing() -> None:
    report = await replay(HERE / "approvals_denied.json")
    d = session(report, "d")
    assert [a["answer"] for a in d["approvals"]] == ["reject_once", "reject_with_note"]
    outputs = [r["output"] for r in d["tool_results"]]
    assert "do not create files" in outputs[1]
    assert outputs[2].startswith("denied by policy")
    assert report["files_changed"] == []


async def test_always_allow_stores_the_edited_rule_and_stops_asking() -> None:
    report = await replay(HERE / "approvals_allowed.json")
    w = session(report, "w")
    assert [a["answer"] for a in w["approvals"]] == ["allow_once", "allow_session", "allow_always"]
    assert [f["path"] for f in report["files_changed"]] == ["one.txt", "three.txt", "two.txt"]


async def test_cancel_keeps_the_partial_reply_marked_incomplete() -> None:
    report = await replay(HERE / "cancel_mid_stream.json")
    long = session(report, "long")
    assert long["turns"][0]["status"] == "cancelled"
    assert long["messages"][1] == {
        "role": "assistant",
        "content": "Once upon a time, in a terminal far away,",
        "incomplete": True,
    }
    assert session(report, "other")["status"] == "completed"


async def test_endpoint_cut_mid_stream_fails_the_turn_and_keeps_the_partial() -> None:
    report = await replay(HERE / "endpoint_errors.json")
    cut = session(report, "cut")
    assert cut["turns"][0]["status"] == "failed"
    assert cut["messages"][1]["content"] == "Half of an answer" and cut["messages"][1]["incomplete"]
    retried = session(report, "retried")
    assert any(e["type"] == "retry" for e in retried["events"])


async def test_restart_restores_the_sessions_and_the_run_continues() -> None:
    report = await replay(HERE / "restart_mid_run.json")
    b = session(report, "b")
    assert [t["status"] for t in b["turns"]] == ["completed", "completed"]
    assert [m["content"] for m in b["messages"]] == [
        "remember the word kiwi",
        "I will remember kiwi.",
        "what was the word?",
        "The word was kiwi.",
    ]
    a = session(report, "a")
    read = [r for r in a["tool_results"] if r["tool"] == "read_file"]
    assert "1" in read[0]["output"]


async def test_replay_is_deterministic() -> None:
    path = HERE / "three_sessions_interleaved.json"
    runs = [json.dumps(await replay(path), sort_keys=True) for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]
    assert "<workspace>" not in runs[0] or "/tmp" not in runs[0]


# -- failures of the replay itself ---------------------------------------------------------------------
def minimal(**extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"sessions": [{"name": "s", "prompts": ["hi"], "replies": [{"content": "Hi"}]}]}
    data.update(extra)
    return data


async def test_an_ask_without_a_scripted_answer_fails_the_replay_without_hanging() -> None:
    data = minimal()
    data["sessions"][0]["replies"] = [
        {"tool_calls": [{"name": "write_file", "arguments": '{"path": "x.txt", "content": "x"}'}]},
        {"content": "ok"},
    ]
    report = await play_cassette(validate_cassette(data), timeout=HANG_GUARD_S)
    assert report["replay_errors"] == [
        "no scripted answer for the approval ask in session s: write_file x.txt"
    ]
    assert not report_ok(report)
    assert session(report, "s")["tool_results"][0]["status"] == "denied"


async def test_running_out_of_replies_is_a_replay_error() -> None:
    data = minimal()
    data["sessions"][0]["prompts"] = ["one", "two"]
    report = await play_cassette(validate_cassette(data), timeout=HANG_GUARD_S)
    assert any("more often than it has scripted replies" in e for e in report["replay_errors"])


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {
                "sessions": [
                    {"name": "a"},
                    {
                        "name": "b",
                        "replies": [{"tool_calls": [{"name": "read_file", "arguments": {"path": "x"}}]}],
                    },
                ]
            },
            "sessions[1].replies[0].tool_calls[0].arguments: expected a string",
        ),
        ({"sessions": [{"prompts": ["x"]}]}, "sessions[0]: missing required field 'name'"),
        ({"sessions": [{"name": "a", "colour": 1}]}, "sessions[0]: unknown field 'colour'"),
        ({"sessions": []}, "sessions: [] should be non-empty"),
        ({"sessions": [{"name": "a", "prompts": [3]}]}, "sessions[0].prompts[0]: expected a prompt string"),
        (
            {"sessions": [{"name": "a", "replies": [{"reads": ["x"], "content": "y"}]}]},
            "sessions[0].replies[0].content: a raw reply ('reads') cannot also have message fields",
        ),
        (
            {"sessions": [{"name": "a"}], "answers": [{"session": "a", "answer": "maybe"}]},
            "answers[0].answer: 'maybe' is not one of",
        ),
        (
            {"sessions": [{"name": "a", "prompts": [{"prompt": "x", "after": "zz"}]}]},
            "sessions[0].prompts[0].after: 'zz' is not another session",
        ),
        (
            {"sessions": [{"name": "a"}], "expect": {"b": {"status": "completed"}}},
            "expect.b: no session named 'b'",
        ),
        ({"sessions": [{"name": "a"}], "workspace": {"../x": "y"}}, "workspace.../x: paths must be relative"),
    ],
)
def test_bad_cassettes_name_the_field(data: dict[str, Any], message: str) -> None:
    with pytest.raises(CassetteError) as info:
        validate_cassette(data, "bad.json")
    assert str(info.value).startswith("bad.json: ")
    assert message in str(info.value)


def test_unreadable_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"sessions": [\n  {"name": "a",}\n]}')
    with pytest.raises(
        CassetteError, match=r"c\.json: not valid JSON \(line 2, column 16: Expecting property name"
    ):
        load_cassette(path)


def test_cli_bad_cassette_exits_2_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"sessions": [{"name": "a", "replies": [{"content": 5}]}]}))
    assert cli_main(["replay", str(path)]) == 2
    assert "sessions[0].replies[0].content: expected a string or null" in capsys.readouterr().err


def test_cli_expect_failure_exits_1_with_a_diff(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps(minimal(expect={"s": {"status": "failed", "messages": 2}})))
    assert cli_main(["replay", str(path)]) == 1
    out = capsys.readouterr().out
    assert "EXPECT FAILED" in out
    assert 's.status: expected "failed", got "completed"' in out
    assert '-    "status": "failed"' in out and '+    "status": "completed"' in out


def test_replay_through_a_real_subprocess_prints_one_json_object() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "paragents.cli",
            "replay",
            str(HERE / "two_sessions_interleaved.json"),
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=HANG_GUARD_S,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert [s["name"] for s in report["sessions"]] == ["api", "web"]
    assert report["expect"]["ok"] is True


@pytest.mark.parametrize("answer", ["skip", "run_anyway"])
async def test_conflicts_are_answered_from_the_cassette(answer: str) -> None:
    report = await replay(HERE / f"conflict_{answer}.json")
    reader = session(report, "reader")
    assert [(c["kind"], c["answer"]) for c in reader["conflicts"]] == [("stale_read", answer)]
    edit = next(r for r in reader["tool_results"] if r["tool"] == "edit_file")
    assert edit["status"] == ("skipped" if answer == "skip" else "ok")
