"""sandbox.autoAllow in the policy: a sandboxed command that would ask only because it is a command runs;
deny and ask rules, protected paths, unanalysable commands and writes outside the workdir still apply."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from paragents.permissions import Decision, Policy


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    return root


def decide(policy: Policy, command: str, project: Path, **kw: Any) -> Decision:
    return policy.decide("run_command", {"command": command}, cwd=project, sandboxed=True, **kw)


def test_commands_asking_only_by_default_run_with_the_sandbox_as_reason(
    project: Path, tmp_path: Path
) -> None:
    policy = Policy.load(project)
    for command in ("pytest -q", "echo x > out.txt", f"cat {tmp_path}/elsewhere.txt", "sleep 5 &"):
        assert policy.decide("run_command", {"command": command}, cwd=project).decision == "ask"
        got = decide(policy, command, project)
        assert got.decision == "allow", (command, got.reason)
        assert "sandboxed" in got.reason and "sandbox.autoAllow" in got.reason
        assert got.scope == "sandbox"


def test_deny_and_ask_rules_still_apply(project: Path) -> None:
    policy = Policy.load(project, cli_rules={"deny": ["Bash(curl *)"], "ask": ["Bash(git push *)"]})
    assert decide(policy, "curl https://example.com", project).decision == "deny"
    assert decide(policy, "ls && git push origin main", project).decision == "ask"


def test_writes_and_deletions_outside_the_workdir_still_ask(project: Path, tmp_path: Path) -> None:
    policy = Policy.load(project)
    assert decide(policy, f"rm -rf {tmp_path}/other", project).decision == "ask"
    assert decide(policy, "rm -f ../sibling.txt", project).decision == "ask"
    assert decide(policy, "rm -f build.log", project).decision == "allow"


def test_protected_paths_and_unanalysable_commands_still_ask(project: Path) -> None:
    policy = Policy.load(project)
    assert decide(policy, "echo x > .git/config", project).decision == "ask"
    assert decide(policy, 'eval "$CMD"', project).decision == "ask"


def test_plan_mode_still_denies_commands(project: Path) -> None:
    assert decide(Policy.load(project), "ls", project, mode="plan").decision == "deny"
