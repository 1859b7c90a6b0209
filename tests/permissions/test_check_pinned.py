"""``paragents permissions check --json`` pinned: decision, rule, scope, the reason's exact text and
the suggested rules of one call per path through the policy (what a person reads; issue 26 asks for
explanation text and scopes to be pinned)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paragents.cli.permissions import main

RULES = {
    "allow": ["Bash(ls *)", "Bash(git status)", "WebFetch(domain:docs.example.com)"],
    "deny": ["Bash(rm *)", "Read(.env)", "Edit(//etc/**)"],
    "ask": ["Bash(npm publish *)"],
}
PINNED = [
    (
        "Bash",
        '{"command":"ls -la"}',
        "",
        "allow",
        "Bash(ls *)",
        "project",
        "`ls -la` is allowed by rule Bash(ls *) (allow, project: {root}/permissions.json)",
        [],
    ),
    (
        "Bash",
        '{"command":"rm -rf x"}',
        "",
        "deny",
        "Bash(rm *)",
        "project",
        "`rm -rf x` is denied by rule Bash(rm *) (deny, project: {root}/permissions.json)",
        [],
    ),
    (
        "Bash",
        '{"command":"ls && make"}',
        "",
        "ask",
        None,
        "default",
        "no rule allows `make`",
        ["Bash(make *)"],
    ),
    (
        "Bash",
        '{"command":"npm publish"}',
        "",
        "ask",
        "Bash(npm publish *)",
        "project",
        "`npm publish` asks because of rule Bash(npm publish *) (ask, project: {root}/permissions.json)",
        [],
    ),
    (
        "Bash",
        '{"command":"base64 .env"}',
        "",
        "deny",
        "Read(.env)",
        "project",
        "`base64 .env` names {root}/.env: Read of {root}/.env is denied by rule Read(.env) (deny, project: {root}/permissions.json)",  # noqa: E501
        [],
    ),
    (
        "Read",
        '{"path":".env"}',
        "",
        "deny",
        "Read(.env)",
        "project",
        "Read of {root}/.env is denied by rule Read(.env) (deny, project: {root}/permissions.json)",
        [],
    ),
    (
        "Read",
        '{"path":"/usr/share/x"}',
        "",
        "ask",
        None,
        "default",
        "/usr/share/x is outside the working directories",
        ["Read(//usr/share/x)"],
    ),
    (
        "Edit",
        '{"path":"/etc/hosts"}',
        "",
        "deny",
        "Edit(//etc/**)",
        "project",
        "Edit of /etc/hosts is denied by rule Edit(//etc/**) (deny, project: {root}/permissions.json)",
        [],
    ),
    (
        "Edit",
        '{"path":"a.txt"}',
        "acceptEdits",
        "allow",
        None,
        "mode",
        "acceptEdits mode: edits inside the working directories run (no rule allows editing {root}/a.txt (inside the working directories))",  # noqa: E501
        [],
    ),
    (
        "Edit",
        '{"path":"a.txt"}',
        "plan",
        "deny",
        None,
        "mode",
        "plan mode: only reads run, so this is not run (no rule allows editing {root}/a.txt (inside the working directories))",  # noqa: E501
        [],
    ),
    (
        "Edit",
        '{"path":".git/config"}',
        "bypassPermissions",
        "ask",
        None,
        "protected",
        "protected path: {root}/.git/config is inside .git/ (repository internals); changing it always asks",
        [],
    ),
    (
        "WebFetch",
        '{"url":"https://docs.example.com/x"}',
        "",
        "allow",
        "WebFetch(domain:docs.example.com)",
        "project",
        "WebFetch https://docs.example.com/x matches rule WebFetch(domain:docs.example.com) (allow, project: {root}/permissions.json)",  # noqa: E501
        [],
    ),
    (
        "WebFetch",
        '{"url":"https://evil.example/x"}',
        "",
        "ask",
        None,
        "default",
        "no rule allows fetching evil.example",
        ["WebFetch(domain:evil.example)"],
    ),
    (
        "Bash",
        '{"command":"make"}',
        "dontAsk",
        "deny",
        None,
        "mode",
        "dontAsk mode: this would ask, so it is denied (no rule allows `make`)",
        [],
    ),
    (
        "Edit",
        '{"path":".git/config"}',
        "dontAsk",
        "deny",
        None,
        "mode",
        "dontAsk mode: this would ask, so it is denied (protected path: {root}/.git/config is inside .git/ (repository internals); changing it always asks)",  # noqa: E501
        [],
    ),
    (  # the protected path is the reason shown, not "no rule allows `printf x`" (hostile demo, issue 25)
        "Bash",
        '{"command":"printf x >> .git/config"}',
        "",
        "ask",
        None,
        "protected",
        "protected path: {root}/.git/config is inside .git/ (repository internals); changing it always asks",
        [],
    ),
    (
        "mcp__fs__write",
        '{"path":"a.txt"}',
        "plan",
        "ask",
        None,
        "mode",
        "plan mode: the MCP tool is not read-only, so it asks (no rule allows the tool mcp__fs__write)",
        [],
    ),
]


@pytest.mark.parametrize(("tool", "given", "mode", "decision", "rule", "scope", "reason", "rules"), PINNED)
def test_check_json_is_pinned(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    tool: str,
    given: str,
    mode: str,
    decision: str,
    rule: str | None,
    scope: str,
    reason: str,
    rules: list[str],
) -> None:
    root = tmp_path / "pin"
    (root / "src").mkdir(parents=True)
    (root / ".env").write_text("x\n")
    (root / "permissions.json").write_text(json.dumps({"permissions": RULES}))
    args = ["check", "--cwd", str(root), "--tool", tool, "--input", given, "--json"]
    assert main(args + (["--mode", mode] if mode else [])) == 0
    got = json.loads(capsys.readouterr().out)
    source = str(root / "permissions.json") if scope == "project" else None
    expected = (decision, rule, scope, source, reason.format(root=root), rules, mode or "default")
    assert (got["decision"], got["rule"], got["scope"], got["source"], got["reason"],
            got["suggested_rules"], got["mode"]) == expected  # fmt: skip


def test_check_prints_no_escape_sequence_taken_from_its_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A command given to `permissions check` (pasted from a log, a model's call) may hold escape
    sequences: the text report shows the command without them (found by a fresh user)."""
    given = json.dumps({"command": "echo \x1b[31mred\x1b[0m \x1b]52;c;Y2xpcA==\x07 \x07done"})
    assert main(["check", "--cwd", str(tmp_path), "--tool", "Bash", "--input", given]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "echo red" in out and "done" in out
