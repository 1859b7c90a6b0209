"""Redirects, variables and nesting in the shell analysis (``shell.py``): which redirect targets
are written or read (fd duplications, ``/dev/null`` and pipes to a process are not files), a
target computed when it runs, values given to variables (``X=``, ``for``, ``read``), and how deep
``bash -c`` strings are parsed."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from permission_helpers import bash

from paragents.permissions import Policy
from paragents.permissions.shell import MAX_NESTING, parse_command
from paragents.permissions.targets import write_targets


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".env").write_text("KEY=1\n")
    return root


@pytest.mark.parametrize(
    ("command", "writes", "reads", "unknown"),
    [
        ("echo x >& out", [("out", ">& out")], [], False),
        ("echo x &> f", [("f", "&> f")], [], False),
        ("echo x &>> f", [("f", "&>> f")], [], False),
        ("echo x >| f", [("f", ">| f")], [], False),
        ("echo x 3> f", [("f", "> f")], [], False),
        ("echo x 2>&1", [], [], False),  # a duplicated descriptor is not a file
        ("echo x 1>&2", [], [], False),
        ("echo x >&-", [], [], False),  # nor a closed one
        ("cat <&-", [], [], False),
        ("echo x > /dev/null", [], [], False),
        ("echo x > /dev/stderr", [], [], False),
        ("echo x > >(cat)", [], [], False),  # a pipe to a process
        ("cat < f", [], [("f", "< f")], False),
        ("echo hi > $(printf /etc/x)", [(None, "> $(printf /etc/x)")], [], True),  # computed: unknown
        ("echo hi >> `printf /etc/x`", [(None, ">> `printf /etc/x`")], [], True),
        ("cat < $(printf .env)", [], [(None, "< $(printf .env)")], False),
    ],
)
def test_redirect_targets(
    command: str, writes: list[tuple[str | None, str]], reads: list[tuple[str | None, str]], unknown: bool
) -> None:
    parsed = parse_command(command)
    assert [(t.path, t.origin) for t in parsed.writes] == writes
    assert [(t.path, t.origin) for t in parsed.reads] == reads
    assert write_targets(command, Path("/w"))[1] is unknown


def test_the_commands_of_a_computed_target_are_checked_too() -> None:
    ran = [" ".join(c.effective) for c in parse_command("echo hi > $(printf x)").commands]
    assert ran == ["echo hi", "printf x"]


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("echo hi > $(printf /etc/x)", "'> $(printf /etc/x)' writes a path that is only known when it runs"),
        ("echo hi >> `printf /etc/x`", "'>> `printf /etc/x`' writes a path that is only known when it runs"),
        ("cat < $(printf .env)", "'< $(printf .env)' reads a path that is only known when it runs"),
    ],
)
def test_a_computed_redirect_target_asks_even_in_bypass_mode(
    project: Path, command: str, reason: str
) -> None:
    """``echo hi > $(printf /etc/x)`` ran past ``Edit(//etc/**)`` before: the target was dropped."""
    policy = Policy.load(project, cli_rules={"deny": ["Edit(//etc/**)", "Read(.env)"]})
    got = bash(policy, command, project, mode="bypassPermissions")
    assert (got.decision, got.reason) == ("ask", reason)


@pytest.mark.parametrize(
    ("command", "decision"),
    [
        ("X= ; base64 ${X}.env", "deny"),  # an empty value is a known value
        ("X=.env base64 $X", "deny"),
        ("export X=.env; base64 $X", "deny"),
        ("for f in a .env; do base64 $f; done", "deny"),
        ("for f in a $(ls); do base64 $f; done", "ask"),  # one value computed: it could be anything
        ("local X=$(ls); base64 $X", "ask"),
        ("read X; base64 $X", "ask"),
    ],
)
def test_values_given_to_variables(project: Path, command: str, decision: str) -> None:
    policy = Policy.load(project, cli_rules={"deny": ["Read(.env)"]})
    got = bash(policy, command, project, mode="bypassPermissions")
    assert got.decision == decision
    if decision == "ask":
        argument = "$X" if "$X" in command else "$f"
        assert got.reason == (
            f"`base64 {argument}`: an argument is computed when it runs, so it could name a path that "
            "Read(.env) covers"
        )


def nested(depth: int) -> str:
    command = "ls"
    for _ in range(depth):
        command = "bash -c " + shlex.quote(command)
    return command


def test_bash_c_strings_are_parsed_six_deep() -> None:
    assert MAX_NESTING == 6
    deepest = parse_command(nested(6))
    assert deepest.problem is None
    assert [" ".join(c.effective) for c in deepest.commands if not c.transparent] == ["ls"]
    too_deep = parse_command(nested(7))
    assert too_deep.problem == "nesting of eval/sh -c is deeper than 6 in 'bash -c ls'"


def test_a_too_deep_string_is_never_allowed(project: Path) -> None:
    policy = Policy.load(project, cli_rules={"allow": ["Bash"]})
    got = bash(policy, nested(7), project)
    assert (got.decision, got.scope) == ("ask", "default")
    assert got.reason == "`bash -c ls`: bash runs a string nested deeper than 6 levels"
    assert got.subcommands[-1].reason == (
        "nesting of eval/sh -c is deeper than 6 in 'bash -c ls'; it cannot be checked"
    )
