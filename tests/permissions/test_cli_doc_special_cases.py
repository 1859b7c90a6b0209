"""Claude Code's documented Bash special cases (code.claude.com/docs/en/permissions, "Tool-specific
permission rules › Bash"), each checked with ``paragents permissions check``. A case's id quotes the
documentation's own wording; cases marked "paragents:" are this project's stricter reading."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import pytest

from paragents.cli.permissions import main


class Case(NamedTuple):
    wording: str
    command: str
    allow: tuple[str, ...]
    expect: str
    deny: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()


def check(capsys: pytest.CaptureFixture[str], cwd: Path, command: str, **rules: tuple[str, ...]) -> dict:
    args = ["check", "--tool", "Bash", "--input", json.dumps({"command": command}), "--cwd", str(cwd)]
    for kind, texts in rules.items():
        for text in texts:
            args += [f"--{kind}", text]
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


WRAPPERS = (
    "strips a fixed set of process wrappers so a rule like Bash(npm test *) also matches timeout 30 npm test"
)
CASES = [
    Case(WRAPPERS, "timeout 30 npm test", ("Bash(npm test *)",), "allow"),
    Case(f"{WRAPPERS} (time)", "time npm test", ("Bash(npm test *)",), "allow"),
    Case(f"{WRAPPERS} (nice)", "nice -n 10 npm test", ("Bash(npm test *)",), "allow"),
    Case(f"{WRAPPERS} (nohup)", "nohup npm test", ("Bash(npm test *)",), "allow"),
    Case(f"{WRAPPERS} (stdbuf)", "stdbuf -oL npm test", ("Bash(npm test *)",), "allow"),
    Case(f"{WRAPPERS} (nested)", "nice timeout 30 npm test", ("Bash(npm test *)",), "allow"),
    Case(
        "Bare xargs is also stripped, so Bash(grep *) matches xargs grep pattern",
        "xargs grep pattern",
        ("Bash(grep *)",),
        "allow",
    ),
    Case(
        "an invocation like xargs -n1 grep pattern is matched as an xargs command, so rules written "
        "for the inner command do not cover it",
        "xargs -n1 grep pattern",
        ("Bash(grep *)",),
        "ask",
    ),
    Case(
        "xargs -n1 grep pattern is matched as an xargs command",
        "xargs -n1 grep pattern",
        ("Bash(xargs -n1 grep *)",),
        "allow",
    ),
    Case(
        "Development environment runners such as direnv exec, devbox run, mise exec, npx, and docker "
        "exec are not in the list",
        "devbox run npm test",
        ("Bash(npm test *)",),
        "ask",
    ),
    Case(
        "a rule like Bash(devbox run *) matches whatever comes after run, including devbox run rm -rf .",
        "devbox run rm -rf .",
        ("Bash(devbox run *)",),
        "allow",
    ),
    Case(
        "write a specific rule that includes both the runner and the inner command, such as "
        "Bash(devbox run npm test)",
        "devbox run npm test",
        ("Bash(devbox run npm test)",),
        "allow",
    ),
    Case(
        "Exec wrappers such as watch ... always prompt and can't be auto-approved by a prefix rule like "
        "Bash(watch *)",
        "watch -n 1 ls",
        ("Bash(watch *)", "Bash(ls *)"),
        "ask",
    ),
    Case(
        "Exec wrappers such as setsid ... can't be auto-approved by a prefix rule",
        "setsid npm test",
        ("Bash(setsid *)", "Bash(npm test *)"),
        "ask",
    ),
    Case(
        "Exec wrappers such as ionice ... can't be auto-approved by a prefix rule",
        "ionice -c 3 npm test",
        ("Bash(ionice *)", "Bash(npm test *)"),
        "ask",
    ),
    Case(
        "Exec wrappers such as flock ... can't be auto-approved by a prefix rule",
        "flock /tmp/lock npm test",
        ("Bash(flock *)", "Bash(npm test *)"),
        "ask",
    ),
    Case(
        "To approve a specific invocation, write an exact-match rule for the full command string",
        "watch -n 1 ls",
        ("Bash(watch -n 1 ls)",),
        "allow",
    ),
    Case(
        "To approve a specific invocation, write an exact-match rule for the full command string (flock)",
        "flock /tmp/lock -c 'npm test'",
        ("Bash(flock /tmp/lock -c npm test)",),
        "allow",
    ),
    Case(
        "The same applies to find with -exec or -delete: a Bash(find *) rule doesn't cover these forms",
        "find . -name x.tmp -delete",
        ("Bash(find *)",),
        "ask",
    ),
    Case(
        "The same applies to find with -exec ...: a Bash(find *) rule doesn't cover these forms",
        "find . -exec ls -l {} +",
        ("Bash(find *)", "Bash(ls *)"),
        "ask",
    ),
    Case(
        "find with -exec: to approve a specific invocation, write an exact-match rule",
        "find . -name '*.py' -exec ls -l {} +",
        ("Bash(find . -name *.py -exec ls -l {} +)",),
        "allow",
    ),
    Case(
        "a Bash(find *) rule doesn't cover these forms (paragents: -execdir)",
        "find . -execdir ls {} ;",
        ("Bash(find *)", "Bash(ls *)"),
        "ask",
    ),
    Case(
        "a Bash(find *) rule doesn't cover these forms (paragents: -ok)",
        "find . -ok ls {} ;",
        ("Bash(find *)", "Bash(ls *)"),
        "ask",
    ),
    Case(
        "a Bash(find *) rule doesn't cover these forms (paragents: -fprint writes a file)",
        "find . -name x -fprint list.txt",
        ("Bash(find *)",),
        "ask",
    ),
    Case(
        "a Bash(find *) rule still covers find without those actions",
        "find . -name x -print",
        ("Bash(find *)",),
        "allow",
    ),
    Case(
        "find with an unquoted glob still prompts because the glob could expand to a flag like -delete",
        "find * -name x",
        ("Bash(find *)",),
        "ask",
    ),
    Case(
        "paragents: sudo runs another command and is never approved by a prefix rule",
        "sudo apt update",
        ("Bash(sudo *)", "Bash(apt update *)"),
        "ask",
    ),
    Case("paragents: env with a command is an exec wrapper", "env CI=1 npm test", ("Bash(env *)",), "ask"),
    Case(
        "paragents: env with a command, exact rule",
        "env CI=1 npm test",
        ("Bash(env CI=1 npm test)",),
        "allow",
    ),
    Case(
        "Claude Code is aware of shell operators, so a rule like Bash(safe-cmd *) won't give it permission "
        "to run the command safe-cmd && other-cmd",
        "safe-cmd && other-cmd",
        ("Bash(safe-cmd *)",),
        "ask",
    ),
]
DENIES = [
    Case("Read and Edit deny rules apply to ... file commands Claude Code recognizes in Bash, such as cat",
         "cat .env", ("Bash(cat *)",), "deny", deny=("Read(.env)",)),
    Case("Read and Edit deny rules apply to ... sed", "sed -i s/a/b/ config.ini", ("Bash(sed *)",), "deny",
         deny=("Edit(config.ini)",)),
    Case("paragents: a Python one-liner that opens a file itself is checked against Read deny rules",
         "python3 -c \"print(open('.env').read())\"", ("Bash(python3 *)",), "deny", deny=("Read(.env)",)),
    Case("paragents: cat-like via node -e",
         "node -e \"process.stdout.write(require('fs').readFileSync('.env'))\"",
         ("Bash(node *)",), "deny", deny=("Read(.env)",)),
    Case("paragents: perl -ne one-liner", "perl -ne 'print' -e 'open(F, \"<secrets/key\")'",
         ("Bash(perl *)",), "deny", deny=("Read(secrets/**)",)),
    Case("paragents: a one-liner writing a path an Edit rule denies", "ruby -e 'File.write(\"a.lock\", 1)'",
         ("Bash(ruby *)",), "deny", deny=("Edit(*.lock)",)),
    Case("paragents: an interpreter one-liner naming a path an ask rule covers asks",
         "python -c \"open('notes/todo.md')\"", ("Bash(python *)",), "ask", ask=("Read(notes/**)",)),
    Case("paragents: awk program naming a denied file",
         "awk '{print}' x && awk 'BEGIN{getline l < \".env\"}'", ("Bash(awk *)",), "deny",
         deny=("Read(.env)",)),
    Case("They don't apply to arbitrary subprocesses that read or write files indirectly, like a Python or "
         "Node script that opens files itself", "python3 tools/show_env.py", ("Bash(python3 *)",), "allow",
         deny=("Read(.env)",)),
    Case("paragents: a one-liner whose code names no denied path", "python3 -c \"print('hello')\"",
         ("Bash(python3 *)",), "allow", deny=("Read(.env)",)),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES + DENIES, ids=[c.wording for c in CASES + DENIES])
def test_documented_bash_special_case(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    got = check(capsys, tmp_path, case.command, allow=case.allow, deny=case.deny, ask=case.ask)
    assert got["decision"] == case.expect, got["reason"]


def test_inner_deny_rules_still_fire_through_every_wrapper(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Deny rules match every layer: xargs with flags, exec wrappers and watch strings included."""
    for command in ("xargs -n1 rm -rf x", "watch 'rm -rf x'", "setsid rm -rf x", "flock /l rm -rf x",
                    "ionice -c3 rm -rf x", "doas rm -rf x", "flock /l -c 'rm -rf x'"):  # fmt: skip
        got = check(capsys, tmp_path, command, allow=("Bash",), deny=("Bash(rm -rf *)",))
        assert got["decision"] == "deny", command


def test_an_exact_rule_suggestion_is_offered_for_exec_wrappers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    got = check(capsys, tmp_path, "watch -n 5 make", allow=("Bash(make *)",))
    assert got["suggested_rules"] == ["Bash(watch -n 5 make)"]
    got = check(capsys, tmp_path, "xargs -0 grep -l TODO")
    assert got["suggested_rules"] == ["Bash(xargs -0 grep -l TODO)"]


def test_approving_a_compound_command_suggests_one_rule_per_subcommand_needing_approval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ "approving git status && npm test saves a rule for npm test" """
    got = check(capsys, tmp_path, "git status && npm test", allow=("Bash(git status)",))
    assert got["suggested_rules"] == ["Bash(npm test *)"]


def test_up_to_5_rules_may_be_saved_for_a_single_compound_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    got = check(capsys, tmp_path, "a1 && a2 && a3 && a4 && a5 && a6 && a7")
    assert got["suggested_rules"] == [f"Bash(a{i} *)" for i in range(1, 6)]


def test_an_exec_wrapper_behind_xargs_still_needs_an_exact_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        check(capsys, tmp_path, "xargs -n1 sudo apt install", allow=("Bash(xargs *)",))["decision"] == "ask"
    )
    exact = ("Bash(xargs -n1 sudo apt install)",)
    assert check(capsys, tmp_path, "xargs -n1 sudo apt install", allow=exact)["decision"] == "allow"
