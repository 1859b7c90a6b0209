"""What well-known commands do with their words (``known_commands.py``), pinned: the prefix an
"always allow" rule keeps, git's global options and subcommand, the wrappers looked through (and
where the wrapped command or string starts), where a shell takes its program from, ``find -exec``
commands, and the variables that change what runs. The last tests run the forms that slipped past
``Bash(rm *)`` through the policy."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from permission_helpers import bash

from paragents.permissions import Policy
from paragents.permissions.known_commands import (
    ShellProgram,
    dangerous_variable,
    find_exec,
    git_config_changes,
    git_globals_end,
    git_subcommand,
    is_assignment,
    rule_prefix,
    shell_program,
    shell_string,
    unwrap,
)


def words(command: str) -> tuple[str, ...]:
    return tuple(shlex.split(command))


ENV_REASON = (
    "sets {name} for the command, which can change what it runs (its config, start-up files, programs or "
    "libraries); only locale, colour, terminal and CI variables are passed without asking"
)


@pytest.mark.parametrize(
    ("command", "prefix"),
    [
        ("ls -la", ("ls",)),
        ("git push -f x", ("git", "push")),
        ("git -v", ("git",)),
        ("git", ("git",)),
        ("npm run test --watch", ("npm", "run", "test")),
        ("npm exec x y", ("npm", "exec", "x")),
        ("pnpm x foo bar", ("pnpm", "x", "foo")),
        ("yarn run", ("yarn", "run")),
        ("yarn add x", ("yarn", "add")),
        ("npm -g i", ("npm",)),
        ("cargo build --release", ("cargo", "build")),
        ("make all", ("make", "all")),
        ("uv run pytest -q", ("uv", "run", "pytest")),
        ("bun x y", ("bun", "x", "y")),
        ("poetry run a b", ("poetry", "run", "a")),
        ("docker run -it x", ("docker", "run")),
        ("pip install -U x", ("pip", "install")),
        ("npx foo bar", ("npx",)),
        ("go test ./...", ("go", "test")),
        ("kubectl get pods", ("kubectl", "get")),
        ("", ()),
    ],
)
def test_rule_prefix(command: str, prefix: tuple[str, ...]) -> None:
    assert rule_prefix(words(command)) == prefix


@pytest.mark.parametrize(
    ("command", "subcommand", "end", "sets_config"),
    [
        ("git", ("", ()), 1, False),
        ("git -C", ("", ()), 3, False),
        ("git -C . push -f", ("push", ("-f",)), 3, False),
        ("git --git-dir=.git log", ("log", ()), 2, False),
        ("git --git-dir .git log", ("log", ()), 3, False),
        ("git -c a=b -p status", ("status", ()), 4, True),
        ("git --no-pager diff x", ("diff", ("x",)), 2, False),
        ("git --work-tree w --namespace n status", ("status", ()), 5, False),
        ("git --list-cmds=main help", ("help", ()), 2, False),
        ("git --super-prefix x commit", ("commit", ()), 3, False),
        ("git --exec-path", ("", ()), 3, True),
        ("git --attr-source x grep", ("grep", ()), 3, False),
        ("git --config-env x=y status", ("status", ()), 3, True),
        ("git --config-env=x=y status", ("status", ()), 2, True),
        ("git --exec-path=/tmp/x status", ("status", ()), 2, True),
        ("git -C . status", ("status", ()), 3, False),
    ],
)
def test_git_global_options(
    command: str, subcommand: tuple[str, tuple[str, ...]], end: int, sets_config: bool
) -> None:
    found = words(command)
    assert (git_subcommand(found), git_globals_end(found), git_config_changes(found)) == (
        subcommand,
        end,
        sets_config,
    )


@pytest.mark.parametrize(
    ("command", "unwrapped"),
    [
        ("env -S 'rm x'", ("env", (), 2, True, True, None)),
        ("env -S", ("env", (), 2, False, False, None)),
        ("env -Srm", ("env", (), 2, True, False, "rm")),
        ("env --split-string='rm x' y", ("env", (), 2, True, False, "rm x")),
        ("env --split-string", ("env", (), 2, False, False, None)),
        ("env -u X rm x", ("env", (), 3, False, False, None)),
        ("env -C d rm", ("env", (), 3, False, False, None)),
        ("env A=1 B=2 rm x", ("env", ("A=1", "B=2"), 3, False, False, None)),
        ("env -- rm", ("env", (), 2, False, False, None)),
        ("script -c 'rm x' log", ("script", (), 2, True, False, None)),
        ("script -c", ("script", (), 2, False, False, None)),
        ("script --command='rm x'", ("script", (), 2, True, False, "rm x")),
        ("script -crm", ("script", (), 2, True, False, "rm")),
        ("script -q log", ("script", (), 2, False, False, None)),
        ("script -E never -c ls", ("script", (), 4, True, False, None)),
        ("su -c 'rm x' root", ("su", (), 2, True, False, None)),
        ("su - root", ("su", (), 3, False, False, None)),
        ("su root", ("su", (), 2, False, False, None)),
        ("su", ("su", (), 1, False, False, None)),
        ("su --session-command=ls", ("su", (), 2, True, False, "ls")),
        ("runuser -u u -c ls", ("runuser", (), 4, True, False, None)),
        ("runuser -u u -- ls", ("runuser", (), 4, False, False, None)),
        ("timeout 5 rm x", ("timeout", (), 2, False, False, None)),
        ("timeout -s KILL 5 rm", ("timeout", (), 4, False, False, None)),
        ("timeout", ("timeout", (), 1, False, False, None)),
        ("nice -n 5 rm", ("nice", (), 3, False, False, None)),
        ("nice -5 rm", ("nice", (), 2, False, False, None)),
        ("nice -", ("nice", (), 1, False, False, None)),
        ("command -v rm", None),
        ("command -V rm", None),
        ("command rm x", ("command", (), 1, False, False, None)),
        ("exec -a name rm", ("exec", (), 3, False, False, None)),
        ("flock f -c 'rm x'", ("flock", (), 3, True, False, None)),
        ("flock -w 5 f rm x", ("flock", (), 4, False, False, None)),
        ("flock f --command ls", ("flock", (), 3, True, False, None)),
        ("watch rm x", ("watch", (), 1, True, True, None)),
        ("watch -n 1 rm x", ("watch", (), 3, True, True, None)),
        ("watch -x rm x", ("watch", (), 2, False, False, None)),
        ("watch --exec rm x", ("watch", (), 2, False, False, None)),
        ("xargs -I {} rm {}", ("xargs", (), 3, False, False, None)),
        ("sudo -u root rm", ("sudo", (), 3, False, False, None)),
        ("/usr/bin/env rm", ("env", (), 1, False, False, None)),
        ("chroot /jail ls", ("chroot", (), 2, False, False, None)),
        ("strace -e open ls", ("strace", (), 3, False, False, None)),
        ("ls", None),
        ("su root -c 'rm x'", ("su", (), 3, True, False, None)),
        ("su - root -c ls", ("su", (), 4, True, False, None)),
        ("runuser root --command=ls", ("runuser", (), 3, True, False, "ls")),
        ("su -s /bin/sh root -c ls", ("su", (), 5, True, False, None)),
        ("runuser --user=u ls", ("runuser", (), 2, False, False, None)),
    ],
)
def test_wrappers_looked_through(
    command: str, unwrapped: tuple[str, tuple[str, ...], int, bool, bool, str | None] | None
) -> None:
    """(wrapper, env assignments, index where the command or string starts, split_string,
    join_rest, string) or None for a command that wraps nothing."""
    found = unwrap(words(command))
    got = None if found is None else (
        found.wrapper, found.assignments, found.start, found.split_string, found.join_rest, found.string
    )  # fmt: skip
    assert got == unwrapped


@pytest.mark.parametrize(
    ("command", "program", "string"),
    [
        ("bash", ShellProgram(source="stdin", index=None, inline=None, inits=()), (False, None)),
        ("bash -c 'x'", ShellProgram(source="string", index=2, inline=None, inits=()), (True, 2)),
        ("bash -c", ShellProgram(source="string", index=None, inline=None, inits=()), (True, None)),
        ("bash -ec x", ShellProgram(source="string", index=2, inline=None, inits=()), (True, 2)),
        ("bash -xc x", ShellProgram(source="string", index=2, inline=None, inits=()), (True, 2)),
        ("bash -oc errexit x", ShellProgram(source="string", index=3, inline=None, inits=()), (True, 3)),
        ("bash -o errexit -c x", ShellProgram(source="string", index=4, inline=None, inits=()), (True, 4)),
        ("bash -O extglob -c x", ShellProgram(source="string", index=4, inline=None, inits=()), (True, 4)),
        ("bash +o x -c y", ShellProgram(source="string", index=4, inline=None, inits=()), (True, 4)),
        ("bash -s", ShellProgram(source="stdin", index=None, inline=None, inits=()), (False, None)),
        ("bash -s a", ShellProgram(source="stdin", index=None, inline=None, inits=()), (False, None)),
        ("bash script.sh", ShellProgram(source="file", index=1, inline=None, inits=()), (False, None)),
        ("bash -x script.sh", ShellProgram(source="file", index=2, inline=None, inits=()), (False, None)),
        ("bash --norc script.sh", ShellProgram(source="file", index=2, inline=None, inits=()), (False, None)),
        ("bash --rcfile f -c x", ShellProgram(source="string", index=4, inline=None, inits=()), (True, 4)),
        (
            "bash --init-file f",
            ShellProgram(source="stdin", index=None, inline=None, inits=()),
            (False, None),
        ),
        ("bash -- script", ShellProgram(source="file", index=2, inline=None, inits=()), (False, None)),
        ("bash -c -- x", ShellProgram(source="string", index=3, inline=None, inits=()), (True, 3)),
        (
            "fish -C 'x' script",
            ShellProgram(source="file", index=3, inline=None, inits=((2, "x"),)),
            (False, None),
        ),
        ("fish --command x", ShellProgram(source="string", index=2, inline=None, inits=()), (True, 2)),
        ("fish --command=x", ShellProgram(source="string", index=1, inline="x", inits=()), (True, 1)),
        ("fish -Command x", ShellProgram(source="string", index=2, inline=None, inits=()), (True, 2)),
        ("pwsh", None, (False, None)),
        ("sh -l", ShellProgram(source="stdin", index=None, inline=None, inits=()), (False, None)),
        ("ls -c x", None, (False, None)),
        ("bash -", ShellProgram(source="stdin", index=None, inline=None, inits=()), (False, None)),
        ("bash /dev/stdin", ShellProgram(source="stdin", index=None, inline=None, inits=()), (False, None)),
        ("sh -i", ShellProgram(source="stdin", index=None, inline=None, inits=()), (False, None)),
        ("bash -C -c x", ShellProgram(source="string", index=3, inline=None, inits=()), (True, 3)),
        ("zsh -C script", ShellProgram(source="file", index=2, inline=None, inits=()), (False, None)),
        ("fish -C a -c b", ShellProgram(source="string", index=4, inline=None, inits=((2, "a"),)), (True, 4)),
        (
            "fish --init-command=a",
            ShellProgram(source="stdin", index=None, inline=None, inits=((1, "a"),)),
            (False, None),
        ),
        (
            "fish --init-command a script",
            ShellProgram(source="file", index=3, inline=None, inits=((2, "a"),)),
            (False, None),
        ),
        ("fish -C", ShellProgram(source="stdin", index=None, inline=None, inits=()), (False, None)),
        ("bash -C", ShellProgram(source="stdin", index=None, inline=None, inits=()), (False, None)),
    ],
)
def test_where_a_shell_takes_its_program_from(
    command: str, program: ShellProgram | None, string: tuple[bool, int | None]
) -> None:
    assert (shell_program(words(command)), shell_string(words(command))) == (program, string)


def test_eval_joins_its_words() -> None:
    assert shell_string(("eval", "rm", "x")) == (True, 1)
    assert shell_string(("eval",)) == (True, None)


@pytest.mark.parametrize(
    ("command", "commands"),
    [
        ("find . -exec rm {} ;", [("rm", "{}")]),
        ("find . -exec rm {} +", [("rm", "{}")]),
        ("find . -execdir a ; -ok b ;", [("a",), ("b",)]),
        ("find . -okdir c {} ;", [("c", "{}")]),
        ("find . -exec rm", [("rm",)]),
        ("find . -name x", []),
        ("ls -exec x ;", []),
    ],
)
def test_find_exec(command: str, commands: list[tuple[str, ...]]) -> None:
    assert find_exec(words(command)) == commands


@pytest.mark.parametrize(
    ("name", "dangerous"),
    [
        ("LD_PRELOAD", True),
        ("LD_ANYTHING", True),
        ("DYLD_INSERT_LIBRARIES", True),
        ("GIT_SSH_COMMAND", True),
        ("PATH", True),
        ("BASH_ENV", True),
        ("ld_preload", True),  # judged without regard to case (env_names), the stricter reading
        ("dyld_x", True),
        ("HOME_DIR", False),
        ("FOO", False),
    ],
)
def test_dangerous_variables(name: str, dangerous: bool) -> None:
    assert dangerous_variable(name) is dangerous


def test_assignments() -> None:
    assert [is_assignment(w) for w in ("A=1", "_a1=", "1A=1", "-A=1", "A", "a b=1")] == [
        True, True, False, False, False, False,
    ]  # fmt: skip


@pytest.mark.parametrize(
    "command",
    [
        "bash -C -c 'rm x'",  # -C (noclobber) takes no value: it swallowed -c
        "sh -C -c 'rm x'",
        "fish --command='rm x'",  # the string was taken for "--command=rm x"
        "fish -C 'rm x'",  # fish's init command was not checked
        "fish --init-command='rm x' -c ls",
        "su root -c 'rm x'",  # su's options may follow the user
        "su - root -c 'rm x'",
        "su -l root --command='rm x'",
        "runuser root -c 'rm x'",
        "runuser -u root -- rm x",  # runuser -u USER runs the command that follows
    ],
)
def test_shell_and_su_forms_meet_deny_rules(tmp_path: Path, command: str) -> None:
    """Each ran ``rm x`` past ``Bash(rm *)`` in bypassPermissions mode before."""
    policy = Policy.load(tmp_path, cli_rules={"deny": ["Bash(rm *)"]})
    got = bash(policy, command, tmp_path, mode="bypassPermissions")
    assert (got.decision, got.rule) == ("deny", "Bash(rm *)"), got.reason


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("PATH=/tmp/evil; ls", "`PATH=/tmp/evil` sets PATH, which changes what later commands run"),
        ("PATH+=:/tmp/evil; ls", "`PATH+=:/tmp/evil` sets PATH, which changes what later commands run"),
        ("LD_LIBRARY_PATH=. ls", f"`LD_LIBRARY_PATH=. ls` {ENV_REASON.format(name='LD_LIBRARY_PATH')}"),
        (
            "env DYLD_X=1 ls",
            f"`env DYLD_X=1 ls` {ENV_REASON.format(name='DYLD_X')}",
        ),
        (
            "git -c core.pager=sh status",
            "`git -c core.pager=sh status` sets git configuration for this run, which can run programs "
            "(core.pager, alias.*)",
        ),
    ],
)
def test_commands_that_change_what_runs_ask(tmp_path: Path, command: str, reason: str) -> None:
    policy = Policy.load(tmp_path, cli_rules={"allow": ["Bash(ls *)", "Bash(git status)", "Bash(env *)"]})
    got = bash(policy, command, tmp_path)
    assert (got.decision, got.reason) == ("ask", reason)
