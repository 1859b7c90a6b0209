"""Parts of a checked command that mutation testing found unpinned (docs/permissions.md): the
labels and reasons a person reads, destructive commands' exact suggestions, ``cd ~``, globs spread
over quoted pieces, and the parser of another thread."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import pytest
from permission_helpers import bash

from paragents.permissions import Policy
from paragents.permissions.shell import parse_command
from paragents.permissions.targets import write_targets


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    (path / ".ssh").mkdir(parents=True)
    (path / ".ssh" / "id_rsa").write_text("k\n")
    monkeypatch.setenv("HOME", str(path))
    return path


@pytest.fixture
def project(tmp_path: Path, home: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".env").write_text("KEY=1\n")
    return root


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("git clean -fdx", "Bash(git clean -fdx)"),
        ("git -p clean -n", "Bash(git -p clean -n)"),  # after one global option
        ("mkfs.ext4 /dev/loop9", "Bash(mkfs.ext4 /dev/loop9)"),
        ("git status -s", "Bash(git status *)"),
    ],
)
def test_always_allow_offers_only_the_exact_command_for_destructive_ones(
    project: Path, command: str, rule: str
) -> None:
    got = bash(Policy.load(project), command, project)
    assert (got.decision, got.suggested_rules) == ("ask", (rule,)), got.reason


def test_a_background_job_is_its_own_part(project: Path) -> None:
    got = bash(Policy.load(project, cli_rules={"allow": ["Bash(sleep *)"]}), "sleep 9 &", project)
    assert [(s.command, s.decision, s.reason) for s in got.subcommands] == [
        ("sleep 9", "allow", "`sleep 9` is allowed by rule Bash(sleep *) (allow, cli)"),
        ("&", "ask", "it starts a background job (&) that keeps running unobserved"),
    ]


def test_a_line_that_does_not_parse_is_labelled_by_its_first_80_characters(project: Path) -> None:
    command = "echo '" + "x" * 100
    got = bash(Policy.load(project), command, project)
    assert got.decision == "ask"
    assert got.subcommands[-1].command == command[:80]


def test_an_exact_only_command_says_why(project: Path) -> None:
    got = bash(Policy.load(project), "find . -exec ls {} +", project)
    assert [(s.command, s.reason) for s in got.subcommands] == [
        ("ls {}", "no rule allows `ls {}`"),  # what -exec runs, without its terminator
        (
            "find . -exec ls {} +",
            "`find . -exec ls {} +`: find with -exec runs, deletes or writes files, so only a rule for "
            "this exact command allows it",
        ),
    ]
    assert got.suggested_rules == ("Bash(ls *)", "Bash(find . -exec ls {} +)")


def test_cd_home_then_a_relative_read_meets_the_home_rule(project: Path, home: Path) -> None:
    policy = Policy.load(project, cli_rules={"deny": ["Read(~/.ssh/**)"]})
    for command in (
        "cd ~ && cat .ssh/id_rsa",
        "cd && base64 .ssh/id_rsa",
        "cd ~/.ssh && cat id_rsa",
        "pushd ~ && cat .ssh/id_rsa",
    ):
        got = bash(policy, command, project, mode="bypassPermissions")
        assert (got.decision, got.rule) == ("deny", "Read(~/.ssh/**)"), command


@pytest.mark.parametrize("command", ['base64 ".en"*', "base64 '.e'n?", 'cat ".e"{nv,x}'])
def test_a_glob_after_quoted_pieces_is_listed(project: Path, command: str) -> None:
    policy = Policy.load(project, cli_rules={"deny": ["Read(.env)"], "allow": ["Bash(*)"]})
    got = bash(policy, command, project)
    assert (got.decision, got.rule) == ("deny", "Read(.env)"), got.reason


def test_a_command_is_parsed_on_another_thread() -> None:
    """The tree-sitter parser is kept per thread (one is not safe to share); a check made on a
    thread that has none yet gets its own."""
    found: list[object] = []
    thread = threading.Thread(target=lambda: found.append(parse_command("rm -rf x").commands[0].words))
    thread.start()
    thread.join()
    assert found == [("rm", "-rf", "x")]


def test_files_a_reader_names_after_an_unknown_cd(project: Path) -> None:
    """After ``cd "$D"`` a relative file is unknown (it asks), an absolute one is what it says."""
    policy = Policy.load(project, cli_rules={"deny": ["Read(.env)"]})
    got = bash(policy, 'cd "$D" && cat .env', project, mode="bypassPermissions")
    assert (got.decision, got.reason) == ("ask", "'cat .env' reads a path that is only known when it runs")
    got = bash(policy, f'cd "$D" && cat {project}/.env', project, mode="bypassPermissions")
    assert (got.decision, got.rule) == ("deny", "Read(.env)")
    got = bash(policy, 'cd "$D" && cat /etc/hostname', project, mode="bypassPermissions")
    assert got.decision == "allow", got.reason


def test_an_exact_rule_for_a_wrapper_running_a_string_does_not_allow_the_string(project: Path) -> None:
    """``script -c STR`` / ``su -c STR`` run STR as a command line, checked on its own: the wrapper's
    exact rule does not allow what the string runs (only exec wrappers such as xargs pass their
    rule on, docs/permissions.md)."""
    for command in ("script -q -c make /dev/null", "su root -c make"):
        policy = Policy.load(project, cli_rules={"allow": [f"Bash({command})"]})
        got = bash(policy, command, project)
        assert [(s.command, s.decision) for s in got.subcommands] == [("make", "ask"), (command, "allow")]


def test_a_known_fish_init_command_is_checked_not_feared(project: Path) -> None:
    policy = Policy.load(project, cli_rules={"deny": ["Bash(rm *)"], "allow": ["Bash(*)"]})
    assert bash(policy, "fish -C 'ls' -c 'ls'", project).decision == "allow"
    got = bash(policy, "fish -C 'rm x' -c 'ls'", project)
    assert (got.decision, got.reason) == ("deny", "`rm x` is denied by rule Bash(rm *) (deny, cli)")
    got = bash(policy, 'fish -C "$X" -c ls', project)
    assert (got.decision, got.reason) == (
        "deny",
        '`fish -C "$X" -c ls`: fish runs an init command that is only known when it runs; it could run '
        "what rule Bash(rm *) (deny, cli) denies",
    )


def test_find_names_each_of_its_actions(project: Path) -> None:
    got = bash(Policy.load(project), "find . -exec ls {} + -delete", project)
    assert got.subcommands[1].reason == (
        "`find . -exec ls {} + -delete`: find with -exec, -delete runs, deletes or writes files, so only "
        "a rule for this exact command allows it"
    )


def test_a_glob_that_could_become_an_option_asks_despite_an_allow_rule(project: Path) -> None:
    """``find * -name x``: a file named ``-delete`` would make ``*`` an action."""
    policy = Policy.load(project, cli_rules={"allow": ["Bash(find *)"]})
    got = bash(policy, "find * -name x", project)
    assert (got.decision, got.reason) == (
        "ask",
        "`find * -name x` its unquoted glob '*' could expand to an option such as -delete",
    )
    assert bash(policy, "find . -name '*'", project).decision == "allow"


def test_a_comment_between_pipeline_stages_is_no_stage(project: Path) -> None:
    """``echo 'rm x' | # note`` then ``sh`` on the next line: sh reads echo's output, known."""
    policy = Policy.load(project, cli_rules={"deny": ["Bash(rm *)"]})
    got = bash(policy, "echo 'rm x' | # note\nsh", project, mode="bypassPermissions")
    assert (got.decision, got.reason) == ("deny", "`rm x` is denied by rule Bash(rm *) (deny, cli)")


def test_an_exact_rule_with_an_assignment_allows_that_command(project: Path) -> None:
    policy = Policy.load(project, cli_rules={"allow": ["Bash(LANG=C make)"]})
    assert bash(policy, "LANG=C make", project).decision == "allow"
    assert bash(policy, "LANG=fr make", project).decision == "ask"


def test_a_file_read_from_a_variable_is_unknown(project: Path) -> None:
    policy = Policy.load(project, cli_rules={"allow": ["Bash(cat *)"]})
    got = bash(policy, 'cat "$X"', project)
    assert (got.decision, got.reason) == ("ask", "'cat \"$X\"' reads a path that is only known when it runs")


def test_a_git_command_rewriting_the_tree_writes_the_repository(project: Path) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "sub").mkdir()
    assert write_targets("git stash", project / "sub") == ([project], False)
    assert write_targets('git -C "$D" stash', project) == ([], True)  # which repository: unknown


def test_a_link_is_shown_with_where_it_leads(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("x\n")
    (project / "link").symlink_to(outside)
    got = Policy.load(project).decide("Read", {"path": "link"}, cwd=project)
    assert (got.decision, got.reason) == (
        "ask",
        f"{project}/link -> {outside} is outside the working directories",
    )
