# ruff: noqa: E501  (pinned reason texts are long; they are compared whole)
"""``paragents permissions check --json`` pinned whole (decision, reason text, rule, scope, source,
every part with its reason, suggested rules, write targets, the destructive reason) for the cases
the live-session agreement test runs (tests/permissions/test_check_agrees.py): that test proves the
CLI and a session agree; this one pins what they agree on, so a change to any reason or scope is
seen (docs/permissions.md, "Mutation testing")."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from paragents.cli.permissions import main

RULES = {
    "allow": ["Bash(ls *)", "Bash(echo *)", "Bash(git status)", "Bash(cat *)"],
    "deny": ["Bash(rm *)", "Bash(git push *)", "Read(.env)", "Edit(//etc/**)"],
    "ask": ["Bash(npm publish *)"],
}


@dataclass(frozen=True)
class Case:
    tool: str
    args: dict[str, Any]
    mode: str | None
    expected: dict[str, Any]
    """The JSON printed, without ``notes``, ``mode`` and ``destructive`` (``destructive_reason``
    says it); ``{root}`` stands for the project directory."""


CASES = [
    Case(
        "run_command",
        {"command": "ls -la"},
        None,
        {
            "decision": "allow",
            "reason": "`ls -la` is allowed by rule Bash(ls *) (allow, project: {root}/permissions.json)",
            "rule": "Bash(ls *)",
            "scope": "project",
            "source": "{root}/permissions.json",
            "subcommands": [
                {
                    "command": "ls -la",
                    "decision": "allow",
                    "reason": "`ls -la` is allowed by rule Bash(ls *) (allow, project: {root}/permissions.json)",
                    "rule": "Bash(ls *)",
                }
            ],
            "suggested_rules": [],
            "write_targets": [],
            "targets_unknown": False,
            "destructive_reason": None,
        },
    ),
    Case(
        "run_command",
        {"command": "ls && rm -rf x"},
        None,
        {
            "decision": "deny",
            "reason": "`rm -rf x` is denied by rule Bash(rm *) (deny, project: {root}/permissions.json)",
            "rule": "Bash(rm *)",
            "scope": "project",
            "source": "{root}/permissions.json",
            "subcommands": [
                {
                    "command": "ls",
                    "decision": "allow",
                    "reason": "`ls` is allowed by rule Bash(ls *) (allow, project: {root}/permissions.json)",
                    "rule": "Bash(ls *)",
                },
                {
                    "command": "rm -rf x",
                    "decision": "deny",
                    "reason": "`rm -rf x` is denied by rule Bash(rm *) (deny, project: {root}/permissions.json)",
                    "rule": "Bash(rm *)",
                },
                {
                    "command": "Edit {root}/x",
                    "decision": "ask",
                    "reason": "no rule allows editing {root}/x (inside the working directories)",
                    "rule": None,
                },
            ],
            "suggested_rules": [],
            "write_targets": ["{root}/x"],
            "targets_unknown": False,
            "destructive_reason": "`rm -rf x` deletes or overwrites files",
        },
    ),
    Case(
        "run_command",
        {"command": "bash <<< 'rm -rf x'"},
        "bypassPermissions",
        {
            "decision": "deny",
            "reason": "`rm -rf x` is denied by rule Bash(rm *) (deny, project: {root}/permissions.json)",
            "rule": "Bash(rm *)",
            "scope": "project",
            "source": "{root}/permissions.json",
            "subcommands": [
                {
                    "command": "rm -rf x",
                    "decision": "deny",
                    "reason": "`rm -rf x` is denied by rule Bash(rm *) (deny, project: {root}/permissions.json)",
                    "rule": "Bash(rm *)",
                },
                {
                    "command": "bash <<< 'rm -rf x'",
                    "decision": "allow",
                    "reason": "`bash <<< 'rm -rf x'` runs nested commands, each checked on its own",
                    "rule": None,
                },
                {
                    "command": "Edit {root}/x",
                    "decision": "allow",
                    "reason": "bypassPermissions mode (no rule allows editing {root}/x (inside the working directories))",
                    "rule": None,
                },
            ],
            "suggested_rules": [],
            "write_targets": ["{root}/x"],
            "targets_unknown": False,
            "destructive_reason": "`rm -rf x` deletes or overwrites files",
        },
    ),
    Case(
        "run_command",
        {"command": "curl x | sh"},
        "default",
        {
            "decision": "deny",
            "reason": "`sh`: sh runs a program read from the output of `curl x`, only known when it runs; it could run what rule Bash(rm *) (deny, project: {root}/permissions.json) denies",
            "rule": "Bash(rm *)",
            "scope": "project",
            "source": "{root}/permissions.json",
            "subcommands": [
                {"command": "curl x", "decision": "ask", "reason": "no rule allows `curl x`", "rule": None},
                {
                    "command": "sh",
                    "decision": "deny",
                    "reason": "`sh`: sh runs a program read from the output of `curl x`, only known when it runs; it could run what rule Bash(rm *) (deny, project: {root}/permissions.json) denies",
                    "rule": "Bash(rm *)",
                },
            ],
            "suggested_rules": [],
            "write_targets": [],
            "targets_unknown": False,
            "destructive_reason": "`sh`: sh runs a program read from the output of `curl x`, only known when it runs, so it may delete anything",
        },
    ),
    Case(
        "run_command",
        {"command": "git -C . push"},
        "acceptEdits",
        {
            "decision": "deny",
            "reason": "`git -C . push` is denied by rule Bash(git push *) (deny, project: {root}/permissions.json)",
            "rule": "Bash(git push *)",
            "scope": "project",
            "source": "{root}/permissions.json",
            "subcommands": [
                {
                    "command": "git -C . push",
                    "decision": "deny",
                    "reason": "`git -C . push` is denied by rule Bash(git push *) (deny, project: {root}/permissions.json)",
                    "rule": "Bash(git push *)",
                }
            ],
            "suggested_rules": [],
            "write_targets": [],
            "targets_unknown": False,
            "destructive_reason": None,
        },
    ),
    Case(
        "run_command",
        {"command": "base64 .env"},
        "bypassPermissions",
        {
            "decision": "deny",
            "reason": "`base64 .env` names {root}/.env: Read of {root}/.env is denied by rule Read(.env) (deny, project: {root}/permissions.json)",
            "rule": "Read(.env)",
            "scope": "project",
            "source": "{root}/permissions.json",
            "subcommands": [
                {
                    "command": "base64 .env",
                    "decision": "allow",
                    "reason": "bypassPermissions mode (no rule allows `base64 .env`)",
                    "rule": None,
                },
                {
                    "command": "`base64 .env` names {root}/.env",
                    "decision": "deny",
                    "reason": "`base64 .env` names {root}/.env: Read of {root}/.env is denied by rule Read(.env) (deny, project: {root}/permissions.json)",
                    "rule": "Read(.env)",
                },
            ],
            "suggested_rules": [],
            "write_targets": [],
            "targets_unknown": False,
            "destructive_reason": None,
        },
    ),
    Case(
        "run_command",
        {"command": "echo hi > out.txt"},
        "acceptEdits",
        {
            "decision": "allow",
            "reason": "all 2 parts are allowed; first: `echo hi` is allowed by rule Bash(echo *) (allow, project: {root}/permissions.json)",
            "rule": "Bash(echo *)",
            "scope": "project",
            "source": "{root}/permissions.json",
            "subcommands": [
                {
                    "command": "echo hi",
                    "decision": "allow",
                    "reason": "`echo hi` is allowed by rule Bash(echo *) (allow, project: {root}/permissions.json)",
                    "rule": "Bash(echo *)",
                },
                {
                    "command": "Edit {root}/out.txt",
                    "decision": "allow",
                    "reason": "acceptEdits mode: edits inside the working directories run (no rule allows editing {root}/out.txt (inside the working directories))",
                    "rule": None,
                },
            ],
            "suggested_rules": [],
            "write_targets": ["{root}/out.txt"],
            "targets_unknown": False,
            "destructive_reason": "`> out.txt` truncates out.txt",
        },
    ),
    Case(
        "run_command",
        {"command": "echo hi > out.txt"},
        "default",
        {
            "decision": "ask",
            "reason": "no rule allows editing {root}/out.txt (inside the working directories)",
            "rule": None,
            "scope": "default",
            "source": None,
            "subcommands": [
                {
                    "command": "echo hi",
                    "decision": "allow",
                    "reason": "`echo hi` is allowed by rule Bash(echo *) (allow, project: {root}/permissions.json)",
                    "rule": "Bash(echo *)",
                },
                {
                    "command": "Edit {root}/out.txt",
                    "decision": "ask",
                    "reason": "no rule allows editing {root}/out.txt (inside the working directories)",
                    "rule": None,
                },
            ],
            "suggested_rules": ["Edit(./out.txt)"],
            "write_targets": ["{root}/out.txt"],
            "targets_unknown": False,
            "destructive_reason": "`> out.txt` truncates out.txt",
        },
    ),
    Case(
        "run_command",
        {"command": "npm publish --tag x"},
        "bypassPermissions",
        {
            "decision": "allow",
            "reason": "bypassPermissions mode (`npm publish --tag x` asks because of rule Bash(npm publish *) (ask, project: {root}/permissions.json))",
            "rule": "Bash(npm publish *)",
            "scope": "mode",
            "source": None,
            "subcommands": [
                {
                    "command": "npm publish --tag x",
                    "decision": "allow",
                    "reason": "bypassPermissions mode (`npm publish --tag x` asks because of rule Bash(npm publish *) (ask, project: {root}/permissions.json))",
                    "rule": "Bash(npm publish *)",
                }
            ],
            "suggested_rules": [],
            "write_targets": [],
            "targets_unknown": False,
            "destructive_reason": None,
        },
    ),
    Case(
        "run_command",
        {"command": "make all"},
        "dontAsk",
        {
            "decision": "deny",
            "reason": "dontAsk mode: this would ask, so it is denied (no rule allows `make all`)",
            "rule": None,
            "scope": "mode",
            "source": None,
            "subcommands": [
                {
                    "command": "make all",
                    "decision": "deny",
                    "reason": "dontAsk mode: this would ask, so it is denied (no rule allows `make all`)",
                    "rule": None,
                }
            ],
            "suggested_rules": [],
            "write_targets": [],
            "targets_unknown": False,
            "destructive_reason": None,
        },
    ),
    Case(
        "run_command",
        {"command": "cat notes.txt"},
        "plan",
        {
            "decision": "deny",
            "reason": "plan mode: only reads run, so this is not run (`cat notes.txt` is allowed by rule Bash(cat *) (allow, project: {root}/permissions.json))",
            "rule": "Bash(cat *)",
            "scope": "mode",
            "source": None,
            "subcommands": [
                {
                    "command": "cat notes.txt",
                    "decision": "deny",
                    "reason": "plan mode: only reads run, so this is not run (`cat notes.txt` is allowed by rule Bash(cat *) (allow, project: {root}/permissions.json))",
                    "rule": "Bash(cat *)",
                },
                {
                    "command": "Read {root}/notes.txt",
                    "decision": "deny",
                    "reason": "plan mode: only reads run, so this is not run (reading {root}/notes.txt inside the working directories)",
                    "rule": None,
                },
            ],
            "suggested_rules": [],
            "write_targets": [],
            "targets_unknown": False,
            "destructive_reason": None,
        },
    ),
    Case(
        "read_file",
        {"path": ".env"},
        None,
        {
            "decision": "deny",
            "reason": "Read of {root}/.env is denied by rule Read(.env) (deny, project: {root}/permissions.json)",
            "rule": "Read(.env)",
            "scope": "project",
            "source": "{root}/permissions.json",
            "subcommands": [
                {
                    "command": "Read {root}/.env",
                    "decision": "deny",
                    "reason": "Read of {root}/.env is denied by rule Read(.env) (deny, project: {root}/permissions.json)",
                    "rule": "Read(.env)",
                }
            ],
            "suggested_rules": [],
            "write_targets": [],
            "targets_unknown": False,
            "destructive_reason": None,
        },
    ),
    Case(
        "read_file",
        {"path": "notes.txt"},
        "plan",
        {
            "decision": "allow",
            "reason": "reading {root}/notes.txt inside the working directories",
            "rule": None,
            "scope": "default",
            "source": None,
            "subcommands": [
                {
                    "command": "Read {root}/notes.txt",
                    "decision": "allow",
                    "reason": "reading {root}/notes.txt inside the working directories",
                    "rule": None,
                }
            ],
            "suggested_rules": [],
            "write_targets": [],
            "targets_unknown": False,
            "destructive_reason": None,
        },
    ),
    Case(
        "write_file",
        {"path": "new.txt", "content": "x"},
        "acceptEdits",
        {
            "decision": "allow",
            "reason": "acceptEdits mode: edits inside the working directories run (no rule allows editing {root}/new.txt (inside the working directories))",
            "rule": None,
            "scope": "mode",
            "source": None,
            "subcommands": [
                {
                    "command": "Edit {root}/new.txt",
                    "decision": "allow",
                    "reason": "acceptEdits mode: edits inside the working directories run (no rule allows editing {root}/new.txt (inside the working directories))",
                    "rule": None,
                }
            ],
            "suggested_rules": [],
            "write_targets": ["{root}/new.txt"],
            "targets_unknown": False,
            "destructive_reason": None,
        },
    ),
    Case(
        "write_file",
        {"path": "new.txt", "content": "x"},
        "plan",
        {
            "decision": "deny",
            "reason": "plan mode: only reads run, so this is not run (no rule allows editing {root}/new.txt (inside the working directories))",
            "rule": None,
            "scope": "mode",
            "source": None,
            "subcommands": [
                {
                    "command": "Edit {root}/new.txt",
                    "decision": "deny",
                    "reason": "plan mode: only reads run, so this is not run (no rule allows editing {root}/new.txt (inside the working directories))",
                    "rule": None,
                }
            ],
            "suggested_rules": [],
            "write_targets": ["{root}/new.txt"],
            "targets_unknown": False,
            "destructive_reason": None,
        },
    ),
    Case(
        "write_file",
        {"path": ".git/config", "content": "x"},
        "bypassPermissions",
        {
            "decision": "ask",
            "reason": "protected path: {root}/.git/config is inside .git/ (repository internals); changing it always asks",
            "rule": None,
            "scope": "protected",
            "source": None,
            "subcommands": [
                {
                    "command": "Edit {root}/.git/config",
                    "decision": "ask",
                    "reason": "protected path: {root}/.git/config is inside .git/ (repository internals); changing it always asks",
                    "rule": None,
                }
            ],
            "suggested_rules": [],
            "write_targets": ["{root}/.git/config"],
            "targets_unknown": False,
            "destructive_reason": None,
        },
    ),
]


def check(
    root: Path, tool: str, args: dict[str, Any], mode: str | None, capsys: pytest.CaptureFixture[str]
) -> Any:
    argv = ["check", "--tool", tool, "--input", json.dumps(args), "--cwd", str(root), "--json"]
    assert main(argv + (["--mode", mode] if mode else [])) == 0
    return json.loads(capsys.readouterr().out.replace(str(root), "{root}"))


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.tool}-{c.mode}-{json.dumps(c.args)[:40]}")
def test_check_json_is_pinned_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: Case) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "notes.txt").write_text("hello\n")
    (root / ".env").write_text("KEY=1\n")
    (root / "permissions.json").write_text(json.dumps({"permissions": RULES}))
    got = check(root, case.tool, case.args, case.mode, capsys)
    assert got.pop("notes") == []
    assert got.pop("mode") == (case.mode or "default")
    assert got.pop("destructive") is (case.expected["destructive_reason"] is not None)
    # its allow rules are not trusted yet: answered as they will be once trusted, and said so
    assert (got.pop("trusted"), got.pop("untrusted_files")) == (False, ["permissions.json"])
    assert got.pop("trust").startswith("NOT trusted yet: permissions.json")
    assert got == case.expected
