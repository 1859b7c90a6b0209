"""Scopes, modes, defaults, files, examples and remembered answers of the Policy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from permission_helpers import bash, edit, read, write_rules

from paragents import paths
from paragents.permissions import Policy, PolicyError


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    return root


# ---- defaults and modes ------------------------------------------------------------------------
def test_defaults_without_rules(project: Path, tmp_path: Path) -> None:
    policy = Policy.load(project)
    assert read(policy, "src/a.py", project).decision == "allow"
    assert read(policy, tmp_path / "elsewhere", project).decision == "ask"
    assert edit(policy, "a.py", project).decision == "ask"
    assert bash(policy, "ls", project).decision == "ask"
    assert policy.decide("mcp__github__create_issue", {}, cwd=project).decision == "ask"
    assert (
        read(policy, tmp_path / "extra" / "x", project, extra_dirs=[tmp_path / "extra"]).decision == "allow"
    )


def test_accept_edits_runs_edits_inside_only(project: Path, tmp_path: Path) -> None:
    policy = Policy.load(project)
    assert edit(policy, "a.py", project, mode="acceptEdits").decision == "allow"
    assert edit(policy, tmp_path / "out.py", project, mode="acceptEdits").decision == "ask"
    assert bash(policy, "ls", project, mode="acceptEdits").decision == "ask"


def test_plan_mode_only_reads(project: Path) -> None:
    policy = Policy.load(project, cli_rules={"allow": ["Bash(ls *)", "Edit"]})
    decision = bash(policy, "ls", project, mode="plan")
    assert decision.decision == "deny"
    assert "plan mode" in decision.reason
    assert edit(policy, "a.py", project, mode="plan").decision == "deny"
    assert read(policy, "a.py", project, mode="plan").decision == "allow"


def test_dont_ask_turns_ask_into_deny(project: Path) -> None:
    policy = Policy.load(project, cli_rules={"allow": ["Bash(ls *)"]})
    assert bash(policy, "ls", project, mode="dontAsk").decision == "allow"
    decision = bash(policy, "rm x", project, mode="dontAsk")
    assert decision.decision == "deny"
    assert "dontAsk" in decision.reason


def test_bypass_runs_everything_but_deny_rules(project: Path) -> None:
    policy = Policy.load(project, cli_rules={"deny": ["Bash(rm *)"], "ask": ["Bash(git push *)"]})
    assert bash(policy, "curl x", project, mode="bypassPermissions").decision == "allow"
    assert bash(policy, "git push", project, mode="bypassPermissions").decision == "allow"
    assert bash(policy, "rm x", project, mode="bypassPermissions").decision == "deny"


def test_a_program_the_parser_cannot_see_is_never_harmless(project: Path) -> None:
    """`curl x | sh` runs what only the network knows: with a deny rule that it could match it is
    denied, without one it asks, in bypass mode too (issue 26 item 6)."""
    denying = Policy.load(project, cli_rules={"deny": ["Bash(rm *)"], "allow": ["Bash(*)"]})
    plain = Policy.load(project, cli_rules={"allow": ["Bash(*)"]})
    for mode in ("default", "bypassPermissions", "acceptEdits"):
        got = bash(denying, "curl x | sh", project, mode=mode)
        assert (got.decision, got.rule) == ("deny", "Bash(rm *)"), mode
        assert "read from the output of `curl x`" in got.reason
        assert bash(plain, "curl x | sh", project, mode=mode).decision == "ask", mode


def test_bypass_can_be_disabled_by_a_file(project: Path) -> None:
    write_rules(paths.managed_settings_path(), disableBypassPermissionsMode="disable")
    policy = Policy.load(project)
    assert bash(policy, "ls", project, mode="bypassPermissions").decision == "ask"


def test_unknown_mode_is_a_readable_error(project: Path) -> None:
    with pytest.raises(ValueError, match="unknown permission mode 'yolo'"):
        bash(Policy.load(project), "ls", project, mode="yolo")


# ---- rule kinds and scopes ---------------------------------------------------------------------
def test_deny_beats_ask_beats_allow(project: Path) -> None:
    policy = Policy.load(
        project,
        cli_rules={
            "allow": ["Bash(git *)"],
            "ask": ["Bash(git push *)"],
            "deny": ["Bash(git push --force *)"],
        },
    )
    assert bash(policy, "git status", project).decision == "allow"
    assert bash(policy, "git push origin", project).decision == "ask"
    assert bash(policy, "git push --force origin", project).decision == "deny"


def test_project_allow_cannot_beat_user_or_managed_deny(project: Path) -> None:
    write_rules(paths.user_permissions_path(), deny=["Bash(curl *)"])
    write_rules(paths.managed_settings_path(), deny=["Edit(./secrets/**)"])
    write_rules(project / "permissions.json", allow=["Bash(curl *)", "Edit(./secrets/**)", "Bash(*)", "Edit"])
    write_rules(project / ".paragents" / "permissions.local.json", allow=["Bash(curl *)"])
    policy = Policy.load(project)
    decision = bash(policy, "curl https://x", project)
    assert decision.decision == "deny"
    assert decision.scope == "user"
    assert str(paths.user_permissions_path()) in decision.reason
    decision = edit(policy, "secrets/k", project)
    assert (decision.decision, decision.scope) == ("deny", "managed")
    assert bash(policy, "make", project).decision == "allow"


def test_rules_table_records_scope_and_source(project: Path) -> None:
    write_rules(paths.user_permissions_path(), allow=["Bash(ls *)"])
    write_rules(project / "permissions.json", deny=["Read(.env)"])
    policy = Policy.load(project, cli_rules={"ask": ["Bash(git push *)"]})
    rows = [(r.kind, r.rule, r.scope, r.source_path) for r in policy.rules_table()]
    assert rows == [
        ("deny", "Read(.env)", "project", project / "permissions.json"),
        ("ask", "Bash(git push *)", "cli", None),
        ("allow", "Bash(ls *)", "user", paths.user_permissions_path()),
    ]


def test_settings_files_replace_user_and_project(project: Path, tmp_path: Path) -> None:
    write_rules(paths.user_permissions_path(), deny=["Bash(ls *)"])
    write_rules(project / "permissions.json", deny=["Bash(ls *)"])
    given = write_rules(tmp_path / "given.json", allow=["Bash(ls *)"])
    policy = Policy.load(project, settings_files=[given])
    assert bash(policy, "ls", project).decision == "allow"


def test_default_mode_and_additional_directories_come_from_files(project: Path, tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    write_rules(project / "permissions.json", defaultMode="acceptEdits", additionalDirectories=["../shared"])
    policy = Policy.load(project)
    assert policy.default_mode == "acceptEdits"
    assert read(policy, tmp_path / "shared" / "x", project).decision == "allow"
    assert Policy.load(tmp_path).default_mode == "default"


def test_session_rules_act_as_allow_rules(project: Path) -> None:
    policy = Policy.load(project, cli_rules={"deny": ["Bash(npm publish *)"]})
    decision = bash(policy, "npm test", project, session_rules=["Bash(npm *)"])
    assert (decision.decision, decision.scope) == ("allow", "session")
    assert bash(policy, "npm publish", project, session_rules=["Bash(npm *)"]).decision == "deny"
    assert bash(policy, "npm test", project).decision == "ask"


def test_mcp_tools_match_by_rule_name(project: Path) -> None:
    policy = Policy.load(
        project,
        cli_rules={"allow": ["mcp__github__get_issue", "mcp__docs"], "deny": ["mcp__github__delete_repo"]},
    )
    assert policy.decide("mcp__github__get_issue", {}, cwd=project).decision == "allow"
    assert policy.decide("mcp__github__create_issue", {}, cwd=project).decision == "ask"
    assert policy.decide("mcp__github__delete_repo", {}, cwd=project).decision == "deny"
    assert policy.decide("mcp__docs__search", {}, cwd=project).decision == "allow"


def test_internal_tool_names_map_to_families(project: Path) -> None:
    policy = Policy.load(project, cli_rules={"deny": ["Read(secret.txt)", "Edit(./locked/**)", "Bash(rm *)"]})
    assert policy.decide("read_file", {"path": "secret.txt"}, cwd=project).decision == "deny"
    assert policy.decide("grep", {"path": "a/secret.txt"}, cwd=project).decision == "deny"
    assert policy.decide("list_dir", {}, cwd=project).decision == "allow"
    assert policy.decide("write_file", {"path": "locked/a"}, cwd=project).decision == "deny"
    assert policy.decide("edit_file", {"path": "locked/b"}, cwd=project).decision == "deny"
    assert policy.decide("run_command", {"command": "rm x"}, cwd=project).decision == "deny"
    assert policy.decide("write_file", {}, cwd=project).decision == "deny"


def test_path_anchors(project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    sub = project / "sub"
    sub.mkdir()
    policy = Policy.load(
        project,
        cli_rules={
            "deny": [
                "Read(~/.ssh/**)",
                "Edit(/build/**)",
                "Edit(./gen/*.py)",
                "Read(//etc/shadow)",
                "Edit(*.lock)",
                "Read(./top.txt)",
            ]
        },
    )
    assert read(policy, "top.txt", project).decision == "deny"
    assert read(policy, "sub/top.txt", project).decision == "allow"  # ./ anchors it: no other depth
    assert read(policy, "~/.ssh/id_rsa", project).decision == "deny"
    assert edit(policy, project / "build" / "x", sub).decision == "deny"
    assert edit(policy, "gen/a.py", sub).decision == "deny"
    assert edit(policy, "gen/deep/a.py", sub).decision == "ask"
    assert read(policy, "/etc/shadow", project).decision == "deny"
    assert edit(policy, "a/b/uv.lock", project).decision == "deny"


# ---- files -------------------------------------------------------------------------------------
def test_malformed_rule_names_file_list_and_index(project: Path) -> None:
    write_rules(project / "permissions.json", allow=["Bash(ls *)", "Read", "Bash(ls"])
    with pytest.raises(PolicyError) as info:
        Policy.load(project)
    message = str(info.value)
    assert "permissions.json: permissions.allow[2]" in message
    assert '"Bash(ls" has an unclosed parenthesis' in message


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (
            '{"permissions": {"allow": [], "alow": []}}',
            "permissions.alow: unknown key; did you mean 'allow'?",
        ),
        ('{"permissions": {"deny": ["Bash()"]}}', "permissions.deny[0]"),
        ('{"permissions": {"ask": ["Read(!x)"]}}', "negated"),
        ('{"permissions": {"allow": ["Bash(x))extra"]}}', "permissions.allow[0]"),
        ('{"permissions": {"defaultMode": "yolo"}}', "permissions.defaultMode"),
        ('{"permissions": {"allow": "Bash"}}', "permissions.allow"),
        ("{not json", "not valid JSON"),
        ('{"permisions": {}}', "permisions"),
    ],
)
def test_bad_files_fail_closed_with_readable_messages(project: Path, content: str, needle: str) -> None:
    (project / "permissions.json").write_text(content, encoding="utf-8")
    with pytest.raises(PolicyError) as info:
        Policy.load(project)
    assert needle in str(info.value)
    assert str(project / "permissions.json") in str(info.value)


def test_claude_code_block_pastes_unchanged(project: Path) -> None:
    block = {
        "$schema": "https://json.schemastore.org/claude-code-settings.json",
        "permissions": {
            "allow": [
                "Bash(npm run test:*)",
                "Read(~/.zshrc)",
                "WebFetch(domain:example.com)",
                "Write(./out/**)",
            ],
            "deny": ["Bash(curl:*)", "Read(./.env)", "Read(./secrets/**)"],
            "ask": ["Bash(git push:*)"],
            "defaultMode": "acceptEdits",
            "additionalDirectories": ["../docs/"],
        },
    }
    (project / "permissions.json").write_text(json.dumps(block), encoding="utf-8")
    policy = Policy.load(project)
    assert bash(policy, "npm run test -- --watch", project).decision == "allow"
    assert bash(policy, "npm run test", project).decision == "allow"
    assert bash(policy, "curl x", project).decision == "deny"
    assert bash(policy, "git push", project).decision == "ask"
    assert edit(policy, "out/a/b.txt", project, mode="default").decision == "allow"


def test_examples_are_checked_on_load(project: Path) -> None:
    data: dict[str, Any] = {
        "permissions": {"allow": ["Bash(ls *)"], "deny": ["Bash(rm *)"]},
        "examples": [
            {"tool": "Bash", "input": {"command": "ls -la"}, "expect": "allow"},
            {"tool": "Bash", "input": {"command": "rm -rf x"}, "expect": "allow"},
        ],
    }
    (project / "permissions.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(
        PolicyError, match=r"permissions.json: examples\[1\]: Bash .* is deny, expected allow"
    ):
        Policy.load(project)
    data["examples"] = data["examples"][:1]
    (project / "permissions.json").write_text(json.dumps(data), encoding="utf-8")
    assert Policy.load(project).rules_table()


def test_cli_rules_are_validated(project: Path) -> None:
    with pytest.raises(PolicyError, match=r"command line --deny\[0\]"):
        Policy.load(project, cli_rules={"deny": ["Bash(x"]})


# ---- remembered answers ------------------------------------------------------------------------
def test_remember_always_writes_local_file_and_next_call_passes(project: Path) -> None:
    policy = Policy.load(project)
    first = bash(policy, "npm run test -- --ci && git status", project)
    assert first.decision == "ask"
    assert first.suggested_rules == ("Bash(npm run test *)", "Bash(git status *)")
    path = policy.remember_always(list(first.suggested_rules))
    assert path == project / ".paragents" / "permissions.local.json"
    assert (project / ".paragents" / ".gitignore").read_text(
        encoding="utf-8"
    ).strip() == "permissions.local.json"
    assert bash(policy, "npm run test -- --ci && git status", project).decision == "allow"
    assert bash(Policy.load(project), "git status", project).scope == "local"
    policy.remember_always(["Bash(npm run test *)"])
    stored = json.loads(path.read_text(encoding="utf-8"))
    assert stored["permissions"]["allow"] == ["Bash(npm run test *)", "Bash(git status *)"]
    with pytest.raises(PolicyError):
        policy.remember_always(["Bash(oops"])


def test_suggestions_for_edits_and_outside_reads(project: Path, tmp_path: Path) -> None:
    policy = Policy.load(project)
    decision = edit(policy, "src/app.py", project)
    assert decision.suggested_rules == ("Edit(./src/app.py)",)
    decision = read(policy, tmp_path / "x y" / "f*.txt", project)
    assert decision.suggested_rules == (f"Read(//{str(tmp_path)[1:]}/x y/f\\*.txt)",)
    policy.remember_always(list(decision.suggested_rules))
    assert read(policy, tmp_path / "x y" / "f*.txt", project).decision == "allow"
    assert read(policy, tmp_path / "x y" / "fa.txt", project).decision == "ask"


def test_no_suggestion_when_always_allow_cannot_help(project: Path) -> None:
    policy = Policy.load(project, cli_rules={"ask": ["Bash(git push *)"]})
    assert bash(policy, "git push", project).suggested_rules == ()
    assert bash(policy, "LD_PRELOAD=x ls", project).suggested_rules == ()


def test_decision_carries_parts_and_write_targets(project: Path) -> None:
    policy = Policy.load(project, cli_rules={"allow": ["Bash(echo *)"]})
    decision = bash(policy, "echo a > out.txt && echo b > $X", project)
    assert decision.write_targets == (str(project / "out.txt"),)
    assert decision.targets_unknown
    commands = [s.command for s in decision.subcommands]
    assert "echo a" in commands[0]
    assert any(c == f"Edit {project / 'out.txt'}" for c in commands)


def test_shipped_example_file_loads_and_its_examples_hold(project: Path) -> None:
    example = Path(__file__).resolve().parents[2] / "paragents" / "permissions" / "permissions.example.json"
    policy = Policy.load(project, settings_files=[example])
    assert any(row.rule == "Bash(rm -rf *)" for row in policy.rules_table())
    broken = json.loads(example.read_text(encoding="utf-8"))
    broken["examples"][0]["expect"] = "deny"
    (project / "broken.json").write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(PolicyError, match=r"examples\[0\]"):
        Policy.load(project, settings_files=[project / "broken.json"])
