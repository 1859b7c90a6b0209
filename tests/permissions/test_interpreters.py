"""Interpreters and wrappers (``special.py``): when an interpreter reads its program from stdin
(then the fed code's path literals meet Read deny rules), the literals a one-liner's code names
(perl's two-argument ``open`` modes stripped, each once, at most 4096 characters), and which
wrappers allow rules look past."""

from __future__ import annotations

from pathlib import Path

import pytest
from permission_helpers import bash

from paragents.permissions import Policy
from paragents.permissions.special import wrapper_kind


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".env").write_text("KEY=1\n")
    return root


@pytest.fixture
def policy(project: Path) -> Policy:
    return Policy.load(
        project,
        cli_rules={
            "deny": ["Read(.env)", "Read(Xdata)"],
            "allow": ["Bash(ls *)", "Bash(strace *)", "Bash(xargs)"],
        },
    )


@pytest.mark.parametrize(
    ("flags", "reads_stdin"),
    [
        ("", True),
        ("-u", True),
        ("-", True),
        ("- arg", True),
        ("--", True),
        ("-- -", True),
        ("-X dev", True),  # -X takes a value: "dev" is no script
        ("-W ignore", True),
        ("-Xdev", True),
        ("script.py", False),
        ("-- script.py", False),
        ("-X dev script.py", False),
        ("-m json.tool", False),
        ("-Im json.tool", False),
        ("-c 'print(1)'", False),
        ("-Ic 'print(1)'", False),
    ],
)
def test_python_reading_its_program_from_stdin(
    policy: Policy, project: Path, flags: str, reads_stdin: bool
) -> None:
    got = bash(policy, f"echo 'open(\".env\")' | python3 {flags}", project, mode="bypassPermissions")
    assert (got.decision, got.rule) == (("deny", "Read(.env)") if reads_stdin else ("allow", None))


@pytest.mark.parametrize(
    ("command", "reads_stdin"),
    [
        ('echo \'require("fs").readFileSync(".env")\' | node -r dotenv/config', True),
        ("echo 'File.read(\".env\")' | ruby -I lib", True),
        ("echo 'open(F, \".env\")' | perl -w", True),
        ("echo 'open(\".env\")' | node app.js", False),
        ("echo 'open(\".env\")' | node -e 'process.stdin.pipe(process.stdout)'", False),
    ],
)
def test_other_interpreters_reading_stdin(
    policy: Policy, project: Path, command: str, reads_stdin: bool
) -> None:
    got = bash(policy, command, project, mode="bypassPermissions")
    assert (got.decision, got.rule) == (("deny", "Read(.env)") if reads_stdin else ("allow", None))


@pytest.mark.parametrize(
    ("code", "rule", "named"),
    [
        ('open(F, ".env |")', "Read(.env)", ".env"),  # a trailing pipe and blank are stripped
        ('open(F, ">> .env")', "Read(.env)", ".env"),
        ('open(F, "+<.env")', "Read(.env)", ".env"),
        ('open(F, "<Xdata")', "Read(Xdata)", "Xdata"),  # only +<>| and blanks are stripped
    ],
)
def test_perl_open_modes(policy: Policy, project: Path, code: str, rule: str, named: str) -> None:
    got = bash(policy, f"perl -e '{code}'", project)
    assert (got.decision, got.rule) == ("deny", rule)
    assert got.reason == (
        f"perl code names {named!r}: Read of {project}/{named} is denied by rule {rule} (deny, cli)"
    )


def test_each_literal_is_checked_once(policy: Policy, project: Path) -> None:
    got = bash(policy, "python3 -c \"open('.env'); open('.env')\"", project)
    assert [s.command for s in got.subcommands] == [
        "python3 -c \"open('.env'); open('.env')\"",
        "python3 code names '.env'",
    ]


def test_literals_longer_than_a_path_are_not_paths(policy: Policy, project: Path) -> None:
    longest = "x" * 4091 + "/.env"  # 4096 characters
    assert bash(policy, f"python3 -c \"open('{longest}')\"", project).rule == "Read(.env)"
    assert (
        bash(policy, f"python3 -c \"open('x{longest}')\"", project, mode="bypassPermissions").decision
        == "allow"
    )


@pytest.mark.parametrize(
    ("command", "decision", "rule"),
    [
        ("xargs ls", "allow", "Bash(ls *)"),  # bare xargs is stripped
        ("xargs -n1 ls", "ask", None),  # with flags it is matched as itself
        ("xargs", "allow", "Bash(xargs)"),
        ("strace ls", "allow", "Bash(strace *)"),  # a wrapper matched as itself: its own rule allows it
    ],
)
def test_which_wrappers_allow_rules_look_past(
    policy: Policy, project: Path, command: str, decision: str, rule: str | None
) -> None:
    got = bash(policy, command, project)
    assert (got.decision, got.rule) == (decision, rule)


@pytest.mark.parametrize(
    ("words", "kind"),
    [
        (("timeout", "5", "ls"), "stripped"),
        (("/usr/bin/nice", "ls"), "stripped"),
        (("xargs", "ls"), "stripped"),
        (("xargs", "-n1", "ls"), "matched"),
        (("xargs",), "matched"),
        (("sudo", "ls"), "exec"),
        (("env", "X=1", "ls"), "exec"),
        (("strace", "ls"), "matched"),
        (("busybox", "ls"), "matched"),
    ],
)
def test_wrapper_kinds(words: tuple[str, ...], kind: str) -> None:
    assert wrapper_kind(words) == kind
