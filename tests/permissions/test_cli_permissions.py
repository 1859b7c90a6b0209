"""``paragents permissions check|show``: output, JSON shape and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from permission_helpers import write_rules

from paragents.cli.permissions import main
from paragents.permissions import Policy


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_check_json_has_per_command_decisions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "check", "--tool", "Bash", "--input", json.dumps({"command": "ls -la && rm -rf x"}),
        "--cwd", str(tmp_path), "--allow", "Bash(ls *)", "--deny", "Bash(rm *)", "--json",
    )  # fmt: skip
    assert code == 0
    data = json.loads(out)
    assert data["decision"] == "deny"
    assert data["rule"] == "Bash(rm *)"
    assert data["scope"] == "cli"
    assert [(s["command"], s["decision"], s["rule"]) for s in data["subcommands"]][:2] == [
        ("ls -la", "allow", "Bash(ls *)"),
        ("rm -rf x", "deny", "Bash(rm *)"),
    ]
    assert set(data["subcommands"][0]) == {"command", "decision", "reason", "rule"}


def test_check_text_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    settings = write_rules(tmp_path / "s.json", allow=["Bash(git status)"])
    code, out, _ = run(
        capsys, "check", "--tool", "Bash", "--input", '{"command": "git status; make"}',
        "--cwd", str(tmp_path), "--settings", str(settings),
    )  # fmt: skip
    assert code == 0
    assert "decision: ask" in out
    assert "no rule allows `make`" in out
    assert "allow  git status" in out
    assert "Bash(make *)" in out


def test_check_modes_and_read_tools(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["check", "--tool", "Edit", "--input", '{"path": "a.py"}', "--cwd", str(tmp_path), "--json"]
    assert json.loads(run(capsys, *args, "--mode", "acceptEdits")[1])["decision"] == "allow"
    assert json.loads(run(capsys, *args, "--mode", "plan")[1])["decision"] == "deny"
    args = ["check", "--tool", "read_file", "--input", '{"path": "a.py"}', "--cwd", str(tmp_path), "--json"]
    assert json.loads(run(capsys, *args)[1])["decision"] == "allow"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--tool", "Bash", "--input", "{bad"], "--input: not valid JSON (line 1, column 2"),
        (["--tool", "Bash", "--input", "[1]"], "must be a JSON object"),
        (["--tool", "Frobnicate", "--input", "{}"], "unknown tool 'Frobnicate'"),
        (["--tool", "Bash", "--input", "{}", "--mode", "yolo"], "unknown permission mode"),
        (["--tool", "Bash", "--input", "{}", "--settings", "/nonexistent/p.json"], "settings file not found"),
        (["--tool", "Bash", "--input", "{}", "--allow", "Bash(ls"], "unclosed parenthesis"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], needle: str
) -> None:
    code, out, err = run(capsys, "check", "--cwd", str(tmp_path), *args)
    assert code == 2
    assert needle in err
    assert err.count("\n") == 1
    assert out == ""


def test_unreadable_settings_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"permissions": {"allow": ["Read", "Bash("]}}', encoding="utf-8")
    code, _, err = run(
        capsys, "check", "--tool", "Bash", "--input", "{}", "--settings", str(bad), "--cwd", str(tmp_path)
    )
    assert code == 2
    assert "permissions.allow[1]" in err


def test_show_lists_rules_with_sources(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_rules(tmp_path / "permissions.json", deny=["Read(.env)"], allow=["Bash(ls *)"], defaultMode="plan")
    code, out, _ = run(capsys, "show", "--cwd", str(tmp_path))
    assert code == 0
    assert "default mode: plan" in out
    assert f"deny   Read(.env)  [project: {tmp_path / 'permissions.json'}]" in out
    assert "allow  Bash(ls *)" in out
    (tmp_path / "permissions.json").write_text("{", encoding="utf-8")
    assert run(capsys, "show", "--cwd", str(tmp_path))[0] == 2


# ---- "always allow" suggestions (issue 12) ----------------------------------------------------
def suggested(capsys: pytest.CaptureFixture[str], cwd: Path, command: str, *rules: str) -> list[str]:
    args = ["check", "--tool", "Bash", "--input", json.dumps({"command": command}), "--cwd", str(cwd)]
    code, out, _ = run(capsys, *args, *rules, "--json")
    assert code == 0
    return json.loads(out)["suggested_rules"]


def test_destructive_command_outside_the_workdir_gets_no_suggestion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert suggested(capsys, tmp_path, "ls && rm -rf ~") == []
    assert suggested(capsys, tmp_path, "rm -rf /tmp/elsewhere") == []
    assert suggested(capsys, tmp_path, "rm -rf $DIR") == []
    code, out, _ = run(capsys, "check", "--tool", "Bash", "--input", '{"command": "ls && rm -rf ~"}',
                       "--cwd", str(tmp_path))  # fmt: skip
    assert code == 0 and "always allow" not in out


def test_destructive_command_inside_the_workdir_gets_only_the_exact_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = suggested(capsys, tmp_path, "rm -rf build")
    assert rules == ["Bash(rm -rf build)", "Edit(./build)"]
    policy = Policy.load(tmp_path)
    policy.remember_always(rules)
    assert policy.decide("Bash", {"command": "rm -rf build"}, cwd=tmp_path).decision == "allow"
    assert policy.decide("Bash", {"command": "rm -rf src"}, cwd=tmp_path).decision == "ask"


def test_no_rule_for_the_whole_home_or_project_is_suggested(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert suggested(capsys, tmp_path, "chmod -R 700 ~") == []
    assert suggested(capsys, tmp_path, "grep -r token ~") == []
    assert suggested(capsys, tmp_path, "chmod 755 .") == []


def test_non_destructive_suggestions_keep_their_prefix_form(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert suggested(capsys, tmp_path, "npm run test") == ["Bash(npm run test *)"]
    assert suggested(capsys, tmp_path, "git status && make build") == [
        "Bash(git status *)",
        "Bash(make build *)",
    ]
    assert suggested(capsys, tmp_path, "touch notes.txt") == ["Bash(touch *)", "Edit(./notes.txt)"]
