"""Edges of the shell analysis as decisions: what a command line is cut into, which rule names the
denial and what the reason says (mutation testing found these unpinned, docs/permissions.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from permission_helpers import bash

from paragents.permissions import Policy


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".env").write_text("KEY=1\n")
    return root


def test_a_misparsed_heredoc_is_denied_by_the_rule_that_surely_matches(project: Path) -> None:
    """tree-sitter reads a quoted heredoc body starting with a backslash as part of the command
    line (hypothesis found it): the line cannot be checked, but its argument ``.env`` surely is a
    Read deny rule's path, so that rule (not "it could run what Bash(rm *) denies") is named."""
    policy = Policy.load(project, cli_rules={"deny": ["Bash(rm *)", "Read(.env)"]})
    command = "cat <<'EOF0' | bash\n\\cat .env\nEOF0"
    got = bash(policy, command, project, mode="bypassPermissions")
    assert (got.decision, got.rule) == ("deny", "Read(.env)")
    assert got.reason == (
        f"`bash\n\\cat .env` names {project}/.env: Read of {project}/.env is denied by rule Read(.env) "
        "(deny, cli)"
    )
    assert got.subcommands[-1].reason == (
        "a heredoc's body could not be told apart from its command line; it cannot be checked; it could "
        "run what rule Bash(rm *) (deny, cli) denies"
    )


def test_a_line_that_does_not_parse_is_denied_as_what_it_could_run(project: Path) -> None:
    policy = Policy.load(project, cli_rules={"deny": ["Bash(rm *)"]})
    got = bash(policy, "echo 'x; cat .env", project, mode="bypassPermissions")
    assert (got.decision, got.rule) == ("deny", "Bash(rm *)")
    assert got.reason == (
        "the command could not be parsed as bash (syntax error or unsupported syntax); it cannot be "
        "checked; it could run what rule Bash(rm *) (deny, cli) denies"
    )
