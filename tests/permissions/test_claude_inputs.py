"""Claude Code's tool inputs name the path ``file_path``: the policy must check that path, never cwd."""

from __future__ import annotations

from pathlib import Path

from paragents.permissions import Policy


def test_file_path_is_checked_like_path(tmp_path: Path) -> None:
    home = Path.home()
    (home / ".ssh").mkdir(parents=True, exist_ok=True)
    policy = Policy.load(tmp_path, cli_rules={"deny": ["Read(~/.ssh/**)"]})
    denied = policy.decide("Read", {"file_path": str(home / ".ssh" / "id_rsa")}, cwd=tmp_path)
    assert denied.decision == "deny" and denied.rule == "Read(~/.ssh/**)"
    outside = policy.decide("Read", {"file_path": "/etc/passwd"}, cwd=tmp_path)
    assert outside.decision == "ask"
    edit = policy.decide("Edit", {"file_path": "x.txt"}, cwd=tmp_path)
    assert edit.decision == "ask" and edit.write_targets == (str(tmp_path.resolve() / "x.txt"),)


def test_a_read_without_any_path_is_refused_but_directory_tools_default_to_cwd(tmp_path: Path) -> None:
    policy = Policy.load(tmp_path)
    assert policy.decide("Read", {}, cwd=tmp_path).decision == "deny"
    assert policy.decide("read_file", {}, cwd=tmp_path).decision == "deny"
    assert policy.decide("list_dir", {}, cwd=tmp_path).decision == "allow"


def test_a_whole_claude_code_settings_file_loads_but_a_misspelt_key_is_an_error(tmp_path: Path) -> None:
    import json

    import pytest

    from paragents.permissions import PolicyError

    settings = {
        "env": {"FOO": "1"},
        "model": "opus",
        "hooks": {},
        "permissions": {"allow": ["Bash(git status)"], "deny": ["Read(./.env)"]},
    }
    (tmp_path / "permissions.json").write_text(json.dumps(settings))
    policy = Policy.load(tmp_path)
    assert policy.decide("Bash", {"command": "git status"}, cwd=tmp_path).decision == "allow"
    assert policy.decide("Read", {"path": ".env"}, cwd=tmp_path).decision == "deny"
    (tmp_path / "permissions.json").write_text(json.dumps({"permisions": {"deny": ["Read(./.env)"]}}))
    with pytest.raises(PolicyError, match="permisions"):
        Policy.load(tmp_path)
