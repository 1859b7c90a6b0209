"""``paragents permissions check`` applies trust as the engine does (TODO "Containment"): a project whose
files are not trusted yet runs no session, so ``check`` says so by name and answers as a session will
once they are trusted (it used a file tool's untrusted allow rules without a word, and failed for a
command on the untrusted config); a trusted project is answered as it is, and says that too. Through
the real CLI entry, against a real Runtime for the "refuses to start" half."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from permission_helpers import write_rules

from paragents.cli.permissions import main
from paragents.config import UntrustedConfig
from paragents.sessions.runtime import Runtime
from tests.trusting import trusted


def check_json(capsys: pytest.CaptureFixture[str], project: Path, tool: str, args: dict[str, str]) -> dict:
    code = main(["check", "--tool", tool, "--input", json.dumps(args), "--cwd", str(project), "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return dict(json.loads(out.out))


async def test_an_untrusted_projects_rules_are_named_and_answered_as_once_trusted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "proj"
    write_rules(project / "permissions.json", allow=["Edit(a.py)"])
    with pytest.raises(UntrustedConfig):  # the engine: no session starts here
        await Runtime.create(project, cli_overrides={"model": "m"}, db_path=tmp_path / "db")
    untrusted = check_json(capsys, project, "write_file", {"path": "a.py", "content": "x"})
    assert untrusted["trusted"] is False and untrusted["untrusted_files"] == ["permissions.json"]
    assert "NOT trusted yet: permissions.json" in untrusted["trust"]
    assert "does not start until you trust them" in untrusted["trust"]
    assert main(["check", "--tool", "write_file", "--input", '{"path": "a.py"}', "--cwd", str(project)]) == 0
    text = capsys.readouterr().out
    assert "trust:    NOT trusted yet: permissions.json" in text and "paragents trust" in text
    trusted(project)
    now = check_json(capsys, project, "write_file", {"path": "a.py", "content": "x"})
    assert now["trusted"] is True and now["untrusted_files"] == []
    assert "trusted" in now["trust"] and "NOT" not in now["trust"]
    # answered as the session will once trusted: the same decision, rule and scope
    for key in ("decision", "rule", "scope"):
        assert untrusted[key] == now[key], key
    assert now["decision"] == "allow" and now["rule"] == "Edit(a.py)"


def test_a_command_in_a_project_with_an_untrusted_config_is_answered_not_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It failed: "the project ... has files that make paragents run commands ... not trusted yet"."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "runtime_config.json").write_text(json.dumps({"sandbox": {"autoAllow": True}}))
    untrusted = check_json(capsys, project, "Bash", {"command": "ls"})
    assert untrusted["untrusted_files"] == ["runtime_config.json"]
    trusted(project)
    now = check_json(capsys, project, "Bash", {"command": "ls"})
    assert now["untrusted_files"] == []
    assert (untrusted["decision"], untrusted["reason"]) == (now["decision"], now["reason"])


def test_a_project_with_nothing_to_trust_says_it_is_answered_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "--tool", "Bash", "--input", '{"command": "ls"}', "--cwd", str(tmp_path)]) == 0
    assert "trust:    the project's files are trusted (or need no trust)" in capsys.readouterr().out
