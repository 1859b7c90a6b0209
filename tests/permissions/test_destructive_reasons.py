# ruff: noqa: E501  (pinned reasons are compared whole)
"""The destructive classifier's reasons, pinned: the phone page's second tap, the approval bar and
``permissions check --json`` show them, so each says what is lost (deleters, ``dd of=``, ``find
-delete``, every destructive git form and its harmless neighbour, truncating redirects,
interpreter code, commands that cannot be seen into); and the tools and argument forms it is
asked about (docs/permissions.md, "Mutation testing")."""

from __future__ import annotations

import pytest

from paragents.permissions.destructive import call_destructive, command_destructive, destructive_reason

REASONS = [
    ('echo hi > "a b"', '`> "a b"` truncates a b'),  # the target as the shell sees it, unquoted
    ("dd of=/dev/sda", "`dd of=/dev/sda` overwrites its output file"),
    ("git push -fu origin", "`git push -fu origin` rewrites or deletes remote history"),
    ("git push origin :x", "`git push origin :x` rewrites or deletes remote history"),
    ("git push origin +m", "`git push origin +m` rewrites or deletes remote history"),
    ("git push origin buffer", None),
    (
        "python3 -c 'import os; os.remove(\"" + "a" * 90 + "\")'",
        "its code deletes, overwrites or runs commands: 'import os; os.remove(\""
        + "a" * 58
        + "'",  # 80 chars
    ),
    ("rm -rf build", "`rm -rf build` deletes or overwrites files"),
    ("rmdir d", "`rmdir d` deletes or overwrites files"),
    ("unlink f", "`unlink f` deletes or overwrites files"),
    ("wipefs -a /dev/sda", "`wipefs -a /dev/sda` deletes or overwrites files"),
    ("srm f", "`srm f` deletes or overwrites files"),
    ("mkfs.ext4 /dev/sda1", "`mkfs.ext4 /dev/sda1` deletes or overwrites files"),
    ("/sbin/mkfs -t ext4 x", "`/sbin/mkfs -t ext4 x` deletes or overwrites files"),
    ("dd if=a of=b", "`dd if=a of=b` overwrites its output file"),
    ("dd if=a", None),
    ("find . -delete", "`find . -delete` deletes the files it finds"),
    ("find . -name x", None),
    ("git clean -n", "`git clean -n` deletes untracked files"),
    ("git push --force", "`git push --force` rewrites or deletes remote history"),
    ("git push -f", "`git push -f` rewrites or deletes remote history"),
    ("git push -uf origin", "`git push -uf origin` rewrites or deletes remote history"),
    (
        "git push --force-with-lease=main:abc",
        "`git push --force-with-lease=main:abc` rewrites or deletes remote history",
    ),
    ("git push origin +main", "`git push origin +main` rewrites or deletes remote history"),
    ("git push origin :old", "`git push origin :old` rewrites or deletes remote history"),
    ("git push origin +", None),
    ("git push origin :", None),
    ("git push --delete origin x", "`git push --delete origin x` rewrites or deletes remote history"),
    ("git push -d origin x", "`git push -d origin x` rewrites or deletes remote history"),
    ("git push --mirror", "`git push --mirror` rewrites or deletes remote history"),
    ("git push --force-if-includes", "`git push --force-if-includes` rewrites or deletes remote history"),
    ("git push -u origin main", None),
    ("git push --follow-tags", None),
    ("git reset --hard", "`git reset --hard` discards uncommitted changes"),
    ("git reset --soft HEAD~1", None),
    ("git checkout -- a", "`git checkout -- a` discards uncommitted changes to files"),
    ("git checkout .", "`git checkout .` discards uncommitted changes to files"),
    ("git checkout -f main", "`git checkout -f main` discards uncommitted changes to files"),
    ("git checkout main", None),
    ("git restore a", "`git restore a` discards uncommitted changes to files"),
    ("git restore --staged a", None),
    (
        "git restore --staged --worktree a",
        "`git restore --staged --worktree a` discards uncommitted changes to files",
    ),
    ("git restore --staged -W a", "`git restore --staged -W a` discards uncommitted changes to files"),
    ("git stash drop", "`git stash drop` deletes stashed changes"),
    ("git stash clear", "`git stash clear` deletes stashed changes"),
    ("git stash pop", None),
    ("git stash", None),
    ("git branch -D x", "`git branch -D x` deletes a branch"),
    ("git branch --delete x", "`git branch --delete x` deletes a branch"),
    ("git branch -d x", None),
    ("git branch x", None),
    ("git filter-branch x", "`git filter-branch x` rewrites the repository's history"),
    ("git filter-repo", "`git filter-repo` rewrites the repository's history"),
    ("git status", None),
    ("echo > a", "`> a` truncates a"),
    ("echo >> a", None),
    ("echo >| a", "`>| a` truncates a"),
    ("echo &> a", "`&> a` truncates a"),
    ("echo 2> a", "`> a` truncates a"),
    ("echo > $X", "`> $X` truncates $X"),
    (
        "python -c 'import os; os.system(\"ls\")'",
        "its code deletes, overwrites or runs commands: 'import os; os.system(\"ls\")'",
    ),
    ("python -c 'import subprocess'", None),
    ('python -c \'open("a", "w")\'', 'its code deletes, overwrites or runs commands: \'open("a", "w")\''),
    ("python -c 'open(\"a\")'", None),
    (
        "python -c 'p.write_text(\"x\")'",
        "its code deletes, overwrites or runs commands: 'p.write_text(\"x\")'",
    ),
    ("perl -e 'unlink(\"a\")'", "its code deletes, overwrites or runs commands: 'unlink(\"a\")'"),
    (
        "ruby -e 'FileUtils.rm_rf(\"a\")'",
        "its code deletes, overwrites or runs commands: 'FileUtils.rm_rf(\"a\")'",
    ),
    (
        'node -e \'fs.writeFileSync("a", "")\'',
        'its code deletes, overwrites or runs commands: \'fs.writeFileSync("a", "")\'',
    ),
    ("python -c 'x.truncate(0)'", "its code deletes, overwrites or runs commands: 'x.truncate(0)'"),
    (
        "python -c 'import os; os.removedirs(\"a\")'",
        "its code deletes, overwrites or runs commands: 'import os; os.removedirs(\"a\")'",
    ),
    ("python -c 'rm -rf'", "its code deletes, overwrites or runs commands: 'rm -rf'"),
    (
        "awk 'BEGIN{system(\"rm -x\")}'",
        "its code deletes, overwrites or runs commands: 'BEGIN{system(\"rm -x\")}'",
    ),
    ("python -c 'shred'", "its code deletes, overwrites or runs commands: 'shred'"),
    ("python -c 'mkfs'", "its code deletes, overwrites or runs commands: 'mkfs'"),
    ("sudo $X", "`sudo $X`: the command name '$X' is only known when it runs, so it may delete anything"),
    ("eval $X", "`eval $X`: eval runs a string that is only known when it runs, so it may delete anything"),
    (
        "echo 'x",
        "the command could not be parsed as bash (syntax error or unsupported syntax), so it may delete anything",
    ),
    ("x=1; $x", "`$x`: the command name '$x' is only known when it runs, so it may delete anything"),
]


@pytest.mark.parametrize(("command", "reason"), REASONS)
def test_each_command_gets_its_reason(command: str, reason: str | None) -> None:
    assert command_destructive(command) == reason


def test_the_first_destructive_part_is_named() -> None:
    assert (
        command_destructive("ls && git push -f && rm x") == "`git push -f` rewrites or deletes remote history"
    )
    assert command_destructive("echo hi > a; rm b") == "`rm b` deletes or overwrites files"  # commands first


@pytest.mark.parametrize(
    ("tool", "arguments", "reason"),
    [
        ("Bash", {"command": "rm x"}, "`rm x` deletes or overwrites files"),
        ("run_command", {"command": "ls"}, None),
        ("Bash", {"command": 3}, "the command is missing, so what it runs is not known"),
        ("run_command", {}, "the command is missing, so what it runs is not known"),
        ("acp_execute", {"command": "rm x"}, "`rm x` deletes or overwrites files"),
        ("acp_execute_shell", {"command": "rm x"}, "`rm x` deletes or overwrites files"),
        ("acp_execute", {}, None),  # an ACP execute request without its command: not a shell call
        ("acp_edit", {"command": "rm x"}, None),
        ("mcp__sh__run", {"command": "rm x"}, None),  # an MCP tool: only its server's hint counts
        ("acp_delete", {"path": "a"}, "the agent deletes files"),
        ("delete", {}, "the agent deletes files"),
        ("write_file", {"path": "a", "content": ""}, None),
    ],
)
def test_tools_and_their_arguments(tool: str, arguments: dict[str, object], reason: str | None) -> None:
    assert destructive_reason(tool, arguments) == reason


def test_a_server_hint_wins() -> None:
    assert (
        destructive_reason("mcp__fs__wipe", {}, destructive_hint=True)
        == "mcp__fs__wipe is marked destructive by its server (destructiveHint)"
    )
    assert destructive_reason("run_command", {"command": "ls"}, destructive_hint=True) is not None


@pytest.mark.parametrize(
    ("tool", "arguments", "reason"),
    [
        ("run_command", '{"command": "rm x"}', "`rm x` deletes or overwrites files"),
        ("Bash", "not json", "its arguments cannot be read, so it may delete anything"),
        ("run_command", "[1]", "its arguments cannot be read, so it may delete anything"),
        ("mcp__fs__read", "not json", None),
        ("Bash", "", "the command is missing, so what it runs is not known"),  # no arguments: {}
        ("acp_delete", "", "the agent deletes files"),
    ],
)
def test_calls_as_asks_carry_them(tool: str, arguments: str, reason: str | None) -> None:
    assert call_destructive(tool, arguments) == reason
