"""The paths an MCP call names are checked as Read (and Edit) targets (issue 26 item 9): which
arguments count as paths (a path-like name, a schema's ``format``, any ``file:`` URI), which do not
(other URLs, non-strings, empty or NUL values), lists, and the limit of paths per call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from paragents.permissions import Decision, Policy


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "secret").mkdir(parents=True)
    return root


@pytest.fixture
def policy(project: Path) -> Policy:
    return Policy.load(
        project,
        cli_rules={"allow": ["mcp__fs"], "deny": ["Read(secret/**)", "Read(.env)", "Edit(locked/**)"]},
    )


def call(
    policy: Policy, project: Path, arguments: dict[str, Any], *, read_only: bool = False, schema: Any = None
) -> Decision:
    return policy.decide("mcp__fs__tool", arguments, cwd=project, read_only=read_only, schema=schema)


@pytest.mark.parametrize(
    "arguments",
    [
        {"path": "secret/a"},
        {"file_path": "secret/a"},
        {"filePath": "secret/a"},
        {"paths": ["ok.txt", "secret/a"]},  # every item of a list
        {"uri": "file://{root}/secret/a"},  # a file: URI, whatever the argument's name
        {"resource": "FILE://{root}/secret/a"},
        {"resource": "file://localhost{root}/secret/a"},
        {"path": "file:///{root}/secret/%61"},  # percent-escapes undone
    ],
)
def test_path_arguments_meet_read_deny_rules(
    policy: Policy, project: Path, arguments: dict[str, Any]
) -> None:
    given = {k: (v.format(root=project) if isinstance(v, str) else v) for k, v in arguments.items()}
    got = call(policy, project, given)
    assert (got.decision, got.rule) == ("deny", "Read(secret/**)")
    assert got.reason == (f"Read of {project}/secret/a is denied by rule Read(secret/**) (deny, cli)")


@pytest.mark.parametrize(
    "arguments",
    [
        {"thing": "secret/a"},  # not a path by its name, and no schema says so
        {"path": "https://example.invalid/.env"},  # a URL of another scheme is not a path
        {"path": "file://otherhost/.env"},  # nor a file: URI of another host
        {"path": ""},
        {"path": 3},
        {"path": "secret/a\x00"},  # cannot name a file
        {"path": ["ok.txt", None, 4]},
    ],
)
def test_other_arguments_are_not_paths(policy: Policy, project: Path, arguments: dict[str, Any]) -> None:
    got = call(policy, project, arguments)
    assert (got.decision, got.rule) == ("allow", "mcp__fs")


@pytest.mark.parametrize(
    "schema",
    [
        {"properties": {"thing": {"type": "string", "format": "path"}}},
        {"properties": {"thing": {"type": "string", "format": "URI"}}},
        {"properties": {"thing": {"type": "array", "items": {"format": "uri-reference"}}}},
    ],
)
def test_a_schema_can_declare_a_path(policy: Policy, project: Path, schema: dict[str, Any]) -> None:
    value: Any = ["secret/a"] if schema["properties"]["thing"]["type"] == "array" else "secret/a"
    got = call(policy, project, {"thing": value}, schema=schema)
    assert (got.decision, got.rule) == ("deny", "Read(secret/**)")


@pytest.mark.parametrize(
    "schema",
    [
        None,
        {"properties": {"thing": {"type": "string", "format": "email"}}},
        {"properties": {"other": {"format": "path"}}},
        {"properties": {"thing": "path"}},
        {"properties": ["thing"]},
        "not a schema",
    ],
)
def test_other_schemas_declare_nothing(policy: Policy, project: Path, schema: Any) -> None:
    assert call(policy, project, {"thing": "secret/a"}, schema=schema).decision == "allow"


def test_at_most_64_paths_are_checked(policy: Policy, project: Path) -> None:
    names = [f"f{i}" for i in range(64)]
    assert call(policy, project, {"paths": names}).decision == "allow"
    assert call(policy, project, {"paths": [*names, "f0"]}).decision == "allow"  # the same path once
    got = call(policy, project, {"paths": [*names, "f64"]})
    assert (got.decision, got.reason) == (
        "ask",
        "mcp__fs__tool names more than 64 paths, too many to check",
    )


def test_a_read_only_tool_is_not_checked_as_an_edit(policy: Policy, project: Path) -> None:
    assert call(policy, project, {"path": "locked/a"}, read_only=True).decision == "allow"
    got = call(policy, project, {"path": "locked/a"})
    assert (got.decision, got.rule) == ("deny", "Edit(locked/**)")


def test_home_paths_are_expanded(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    policy = Policy.load(project, cli_rules={"allow": ["mcp__fs"], "deny": ["Read(~/.ssh/**)"]})
    got = call(policy, project, {"path": "~/.ssh/id_rsa"})
    assert (got.decision, got.rule) == ("deny", "Read(~/.ssh/**)")


def test_inside_the_project_the_tools_own_rule_decides(project: Path) -> None:
    """An edit inside the working directories would ask on its own; for an MCP tool its rule decides."""
    allowed = Policy.load(project, cli_rules={"allow": ["mcp__fs"]})
    got = call(allowed, project, {"path": "notes.txt"})
    assert (got.decision, got.rule, got.scope) == ("allow", "mcp__fs", "cli")
    assert [s.decision for s in got.subcommands] == ["allow", "allow", "allow"]
    unruled = Policy.load(project)
    got = call(unruled, project, {"path": "notes.txt"})
    assert (got.decision, got.reason) == ("ask", "no rule allows the tool mcp__fs__tool")
    assert got.suggested_rules == ("mcp__fs__tool",)


def test_outside_the_project_a_path_asks_even_when_the_tool_is_allowed(project: Path, tmp_path: Path) -> None:
    policy = Policy.load(project, cli_rules={"allow": ["mcp__fs"]})
    outside = tmp_path / "elsewhere.txt"
    got = call(policy, project, {"path": str(outside)})
    assert (got.decision, got.reason) == ("ask", f"{outside} is outside the working directories")
    assert got.suggested_rules == (f"Read(/{outside})", f"Edit(/{outside})")


def test_plan_mode_runs_a_read_only_tool(policy: Policy, project: Path) -> None:
    got = policy.decide("mcp__fs__tool", {"path": "a"}, cwd=project, read_only=True, mode="plan")
    assert got.decision == "allow", got.reason
