"""Claude Code's own settings files carry over (issue 26 item 3), rules mean what they say (items 1,
2, 5): 24 real ``settings.json`` files from public repositories (``claude_settings/``, see its
README) load as the project, project-local and user scopes, with one note naming what paragents
does not use."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import json5
import pytest
from permission_helpers import bash, write_rules

from paragents import paths
from paragents.permissions import Policy, PolicyError

DATA = Path(__file__).parent / "claude_settings"
REAL_FILES = sorted(DATA.glob("*.json"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    return root


def place(project: Path, name: str, where: str = "settings.json") -> Path:
    target = project / ".claude" / where
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(DATA / name, target)
    return target


def test_there_are_at_least_22_real_files() -> None:
    assert len(REAL_FILES) >= 22
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    for file in REAL_FILES:
        assert f"`{file.name}`" in readme, f"{file.name} has no source line in the README"


@pytest.mark.parametrize("file", REAL_FILES, ids=lambda p: p.stem)
@pytest.mark.parametrize("where", ["settings.json", "settings.local.json", "user"])
def test_every_real_file_loads_in_every_scope(
    project: Path, file: Path, where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if where == "user":
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-home"))
        target = tmp_path / "claude-home" / "settings.json"
        target.parent.mkdir()
        shutil.copy(file, target)
        scope = "claude-user"
    else:
        target = place(project, file.name, where)
        scope = "claude-local" if where == "settings.local.json" else "claude-project"
    policy = Policy.load(project)
    raw = json5.loads(file.read_text(encoding="utf-8"))
    unused = [k for k in raw if k not in ("permissions", "$schema")]
    if unused:  # one note naming every key paragents does not use
        notes = [n for n in policy.notes if "ignored" in n]
        assert len(notes) == 1
        assert all(key in notes[0] for key in unused)
        assert str(target) in notes[0]
    rows = policy.rules_table()
    assert all(row.scope == scope and row.source_path == target for row in rows)
    block = raw.get("permissions", {})
    written = sum(len(block.get(kind, [])) for kind in ("allow", "ask", "deny"))
    skipped = [n for n in policy.notes if "skipped" in n]
    assert len(rows) + len(skipped) == written


def test_sentry_webfetch_domain_rules_name_one_host(project: Path) -> None:
    """Item 1: with Sentry's real settings, a fetch of another host is not allowed by
    WebFetch(domain:cli.github.com)."""
    place(project, "getsentry--sentry.json")
    policy = Policy.load(project)
    evil = policy.decide("WebFetch", {"url": "https://evil.example/steal?d=secret"}, cwd=project)
    assert evil.decision == "ask"
    assert evil.rule is None and evil.suggested_rules == ("WebFetch(domain:evil.example)",)
    good = policy.decide("WebFetch", {"url": "https://cli.github.com/manual/gh"}, cwd=project)
    assert (good.decision, good.rule, good.scope) == (
        "allow",
        "WebFetch(domain:cli.github.com)",
        "claude-project",
    )
    assert good.source == str(project / ".claude" / "settings.json")
    sub = policy.decide("WebFetch", {"url": "https://api.cli.github.com/"}, cwd=project)
    assert sub.decision == "ask"  # subdomains only when written *.


def test_domain_rules_deny_only_their_hosts(project: Path) -> None:
    policy = Policy.load(project, cli_rules={"deny": ["WebFetch(domain:*.evil.example)"]})
    fetch = lambda url: policy.decide("WebFetch", {"url": url}, cwd=project).decision  # noqa: E731
    assert fetch("https://a.evil.example/x") == "deny"
    assert fetch("https://b.a.evil.example/x") == "deny"
    assert fetch("https://evil.example/x") == "ask"  # *. means subdomains only
    assert fetch("https://good.example/evil.example") == "ask"
    assert fetch("https://evil.example.good.example/") == "ask"
    assert fetch("HTTPS://A.EVIL.EXAMPLE:8443/") == "deny"
    every = Policy.load(project, cli_rules={"allow": ["WebFetch(domain:*)"]})
    assert every.decide("WebFetch", {"url": "https://x.example/"}, cwd=project).decision == "allow"
    assert every.decide("WebFetch", {"url": ""}, cwd=project).decision == "ask"


def test_specifiers_of_other_tools_are_matched_not_just_present(project: Path) -> None:
    policy = Policy.load(project, cli_rules={"allow": ["WebSearch(python *)", "mcp__fs__read(x)"]})
    assert policy.decide("WebSearch", {"query": "python asyncio"}, cwd=project).decision == "allow"
    assert policy.decide("WebSearch", {"query": "how to steal"}, cwd=project).decision == "ask"
    assert policy.decide("mcp__fs__read", {"path": "x"}, cwd=project).decision == "ask"


def test_ahk_quoted_exact_bash_rule_matches_the_command(project: Path) -> None:
    """Item 2: the AutoHotkey MCP project's exact rule with shell quotes allows that command."""
    place(project, "012090120901209--ahk-mcp.json")
    policy = Policy.load(project)
    command = '"/mnt/c/Program Files/AutoHotkey/v2/AutoHotkey64.exe" /ErrorStdOut "GUI_ButtonMaker.ahk"'
    got = bash(policy, command, project)
    assert got.decision == "allow", got.reason
    assert got.rule and got.rule.startswith('Bash("/mnt/c/Program Files')
    assert policy.default_mode.value == "acceptEdits"
    quoted = Policy.load(project, cli_rules={"allow": ['Bash(echo "hello world")']})
    assert bash(quoted, 'echo "hello world"', project).decision == "allow"
    assert bash(quoted, "echo 'hello world'", project).decision == "allow"
    assert bash(quoted, 'echo "hello world" && rm x', project).decision == "ask"
    assert bash(quoted, "sleep 1", project).decision == "ask"  # a quoted rule matches its words only


def test_kludex_deny_rules_and_dont_ask_mode_apply(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = project.parent / "claude-home"
    home.mkdir()
    shutil.copy(DATA / "Kludex--dotfiles.json", home / "settings.json")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    policy = Policy.load(project)
    assert policy.default_mode.value == "dontAsk"
    got = bash(policy, "git push --force origin main", project)
    assert (got.decision, got.scope) == ("deny", "claude-user")
    assert bash(policy, "git status", project).decision == "allow"
    skipped = [n for n in policy.notes if "skipped" in n]
    assert len(skipped) == 2 and '"Bash(rm -r /)*"' in skipped[0]


def test_auto_mode_maps_to_accept_edits_with_a_note(project: Path) -> None:
    target = project / ".claude" / "settings.json"
    target.parent.mkdir()
    target.write_text(json.dumps({"permissions": {"defaultMode": "auto", "allow": ["Bash(ls *)"]}}))
    policy = Policy.load(project)
    assert policy.default_mode.value == "acceptEdits"
    assert any('defaultMode "auto"' in n and "acceptEdits" in n for n in policy.notes)


def test_a_setting_turns_the_carry_over_off_only_at_its_level(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    place(project, "getsentry--sentry.json")
    home = tmp_path / "claude-home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Bash(rm *)"]}}))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    assert {r.scope for r in Policy.load(project).rules_table()} == {"claude-project", "claude-user"}
    # the project's own file turns off the project's Claude file, never the user's deny rules
    (project / "permissions.json").write_text(json.dumps({"claudeSettings": False}))
    policy = Policy.load(project)
    assert {r.scope for r in policy.rules_table()} == {"claude-user"}
    assert bash(policy, "rm x", project).decision == "deny"
    # the user's file turns off all of them
    write_rules(paths.user_permissions_path())
    paths.user_permissions_path().write_text(json.dumps({"claudeSettings": False}))
    assert Policy.load(project).rules_table() == []


def test_scopes_order_and_show_their_source(project: Path) -> None:
    place(project, "getsentry--sentry.json")
    local = project / ".claude" / "settings.local.json"
    local.write_text(json.dumps({"permissions": {"deny": ["WebFetch(domain:cli.github.com)"]}}))
    policy = Policy.load(project)
    got = policy.decide("WebFetch", {"url": "https://cli.github.com/"}, cwd=project)
    assert (got.decision, got.scope, got.source) == ("deny", "claude-local", str(local))


def test_unknown_keys_are_noted_but_a_misspelt_rule_key_is_an_error(project: Path) -> None:
    target = project / ".claude" / "settings.json"
    target.parent.mkdir()
    target.write_text(json.dumps({"tui": "fullscreen", "permissions": {"allow": [], "disableAutoMode": "x"}}))
    notes = Policy.load(project).notes
    assert notes == [
        f"{target}: ignored (not used by paragents' permission layer): tui, permissions.disableAutoMode"
    ]
    target.write_text(json.dumps({"permisions": {"deny": ["Bash(rm *)"]}}))
    with pytest.raises(PolicyError, match="did you mean 'permissions'"):
        Policy.load(project)
    target.write_text(json.dumps({"permissions": {"dney": ["Bash(rm *)"]}}))
    with pytest.raises(PolicyError, match="did you mean 'deny'"):
        Policy.load(project)


def test_a_root_anchored_rule_naming_a_system_directory_is_warned_about_once(project: Path) -> None:
    """Item 5: Edit(/etc/**) means <project>/etc/** (Claude Code's reading, kept), with a warning."""
    write_rules(project / "permissions.json", deny=["Edit(/etc/**)", "Edit(/etc/**)", "Edit(/src/**)"])
    policy = Policy.load(project)
    warned = [n for n in policy.notes if "did you mean" in n]
    assert len(warned) == 1
    assert "`Edit(//etc/**)`" in warned[0] and f"{project}/etc/" in warned[0]
    assert policy.decide("Edit", {"path": "/etc/hosts"}, cwd=project).decision != "deny"
    assert policy.decide("Edit", {"path": str(project / "etc" / "x")}, cwd=project).decision == "deny"
    (project / "etc").mkdir()  # the project has its own etc/: the rule means it
    assert not [n for n in Policy.load(project).notes if "did you mean" in n]


def test_a_root_anchored_rule_is_warned_about_by_its_first_directory(project: Path) -> None:
    write_rules(project / "permissions.json", deny=["Edit(/usr/no-such-dir/x)"])
    warned = [n for n in Policy.load(project).notes if "did you mean" in n]
    assert len(warned) == 1 and "`Edit(//usr/no-such-dir/x)` for /usr?" in warned[0], warned


def test_the_claude_user_settings_are_read_from_home_by_default(project: Path) -> None:
    user = Path.home() / ".claude" / "settings.json"
    user.parent.mkdir(parents=True)
    user.write_text(json.dumps({"permissions": {"deny": ["Bash(make *)"]}}))
    got = bash(Policy.load(project), "make x", project)
    assert (got.decision, got.scope, got.source) == ("deny", "claude-user", str(user))


def test_a_reloaded_policy_keeps_its_command_line_rules_and_files(project: Path, tmp_path: Path) -> None:
    given = tmp_path / "given.json"
    given.write_text(json.dumps({"permissions": {"deny": ["Bash(make *)"]}}))
    policy = Policy.load(project, cli_rules={"deny": ["Bash(rm *)"]}, settings_files=[given]).reload()
    assert bash(policy, "rm x", project).rule == "Bash(rm *)"
    assert bash(policy, "make", project).rule == "Bash(make *)"
