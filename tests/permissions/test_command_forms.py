"""Command forms the parser used not to see into (issue 26 items 6 and 7): each one is checked end to
end through ``Policy.decide`` in bypass mode and in default mode with the sandbox's auto-allow, and
must be denied by the deny rule that covers what it really runs, reads or writes."""

from __future__ import annotations

from pathlib import Path

import pytest
from permission_helpers import bash

from paragents.permissions import Policy

DENY_RM = "Bash(rm *)"
RULES = {
    "deny": [DENY_RM, "Bash(git push *)", "Read(.env)", "Edit(//etc/**)"],
    "allow": ["Bash(*)"],
}
MODES = [("bypassPermissions", False), ("default", True)]
"""(mode, sandboxed): bypass, and default with ``sandbox.autoAllow`` (the two where nothing asks)."""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / ".env").write_text("KEY=secret\n")
    (root / "notes.txt").write_text("hello\n")
    return root


def decide(
    project: Path, command: str, mode: str, sandboxed: bool, masked: list[str] | None = None
) -> tuple[str, str | None, str]:
    policy = Policy.load(project, cli_rules=RULES)
    hidden = None if masked is None else lambda: masked
    got = bash(policy, command, project, mode=mode, sandboxed=sandboxed, masked=hidden)
    return got.decision, got.rule, got.reason


STDIN_AND_SHELLS = [
    "bash <<< 'rm -rf x'",
    "echo 'rm x' | sh",
    "printf 'rm x\\n' | bash",
    "sh <<EOF\nrm -rf /\nEOF",
    "cat <<'EOF' | bash\nrm y\nEOF",
    "bash -o errexit -c 'rm x'",
    "bash -O extglob -c 'rm x'",
    "bash -e -c 'rm x'",
    "bash --norc -c 'rm x'",
    "env -S'rm x'",
    "env --split-string='rm x'",
    "env -S 'rm -rf' /",
    "fish -c 'rm x'",
    "ash -c 'rm x'",
    "tcsh -c 'rm x'",
    "csh -c 'rm x'",
    "busybox sh -c 'rm x'",
    "script -c 'rm x'",
    "script -q -c 'rm x' /dev/null",
    "busybox rm x",
    "toybox rm x",
    "/bin/busybox rm -rf x",
]


@pytest.mark.parametrize(("mode", "sandboxed"), MODES)
@pytest.mark.parametrize("command", STDIN_AND_SHELLS)
def test_shells_wrappers_and_stdin_programs_meet_the_deny_rule(
    project: Path, command: str, mode: str, sandboxed: bool
) -> None:
    decision, rule, _ = decide(project, command, mode, sandboxed)
    assert (decision, rule) == ("deny", DENY_RM)


@pytest.mark.parametrize(("mode", "sandboxed"), MODES)
@pytest.mark.parametrize(
    "command",
    ["git -C . push", "git --git-dir=.git push", "git -c k=v push origin", "git --work-tree . push",
     "git --no-pager push -f", "git -C src -c a=b --bare push"],
)  # fmt: skip
def test_git_global_options_do_not_hide_the_subcommand(
    project: Path, command: str, mode: str, sandboxed: bool
) -> None:
    decision, rule, _ = decide(project, command, mode, sandboxed)
    assert (decision, rule) == ("deny", "Bash(git push *)")


@pytest.mark.parametrize(("mode", "sandboxed"), MODES)
@pytest.mark.parametrize(
    "command",
    ["base64 .env", "xxd .env", "od -c .env", "tac .env", "nl .env", "sort .env", "awk 1 .env",
     "strings .env", "cut -c1- .env", "paste .env", "rev .env", "iconv -f utf8 .env", "jq -R . .env",
     "vi .env", "tar cf /tmp/x.tar .env", "diff .env notes.txt", "source .env", ". ./.env",
     "base64 .en*", "cat .{env,x}", "f=.env; base64 \"$f\"", "for f in .env a; do xxd $f; done",
     "sudo base64 .env", "timeout 5 od .env", "base64 --wrap=0 ./src/../.env", "dd if=.env"],
)  # fmt: skip
def test_any_command_naming_a_read_denied_path_is_denied(
    project: Path, command: str, mode: str, sandboxed: bool
) -> None:
    decision, rule, reason = decide(project, command, mode, sandboxed)
    assert (decision, rule) == ("deny", "Read(.env)"), reason
    assert str(project / ".env") in reason


@pytest.mark.parametrize("command", ["grep -r KEY .", "grep -R KEY", "rg KEY", "rg -e KEY .", "git grep KEY"])
def test_recursive_readers_of_a_tree_holding_a_denied_path_are_denied(project: Path, command: str) -> None:
    decision, rule, reason = decide(project, command, "bypassPermissions", False)
    assert (decision, rule) == ("deny", "Read(.env)"), reason
    assert "reads every file under" in reason
    # the bubblewrap sandbox hides the denied path, so there the recursive read runs (auto-allowed)
    assert decide(project, command, "default", True, [str(project / ".env")])[0] == "allow"
    # ... but not where nothing hides it (a lane's container, or a path the sandbox left visible)
    assert decide(project, command, "default", True)[:2] == ("deny", "Read(.env)")
    assert decide(project, command, "default", True, [str(project / "src")])[:2] == ("deny", "Read(.env)")
    # a directory that holds no denied path is fine
    assert decide(project, command.replace("KEY", "KEY src").replace(" .", ""), "bypassPermissions", False)[
        0
    ] in (
        "allow",
        "deny",
    )


def test_recursive_read_of_a_clean_directory_runs(project: Path) -> None:
    assert decide(project, "rg KEY src", "bypassPermissions", False)[0] == "allow"
    assert decide(project, "grep -r KEY src", "bypassPermissions", False)[0] == "allow"


def test_a_grep_pattern_is_not_a_path_and_echo_reads_nothing(project: Path) -> None:
    for command in ("grep .env notes.txt", "echo .env", "ls .env", "cd src"):
        assert decide(project, command, "bypassPermissions", False)[0] == "allow", command


def test_a_computed_argument_asks_when_read_rules_exist(project: Path) -> None:
    decision, _, reason = decide(project, 'base64 "$(echo .env)"', "bypassPermissions", False)
    assert decision == "ask"
    assert "computed when it runs" in reason and "Read(.env)" in reason
    decision, _, _ = decide(project, "read f; base64 $f", "bypassPermissions", False)
    assert decision == "ask"
    assert decide(project, "base64 $SOME_ENV_VAR", "bypassPermissions", False)[0] == "allow"


@pytest.mark.parametrize(("mode", "sandboxed"), MODES)
@pytest.mark.parametrize(
    "command",
    ["mv x /etc/", "cp -t /etc x", "cp x /etc", "install x /etc/x", "install -t /etc x", "rsync x /etc/",
     "rsync -a src/ /etc/app", "patch /etc/hosts fix.patch", "patch -o /etc/x a b", "ln -s /etc/passwd y",
     "ln /etc/passwd y", "tee -a /etc/x", "dd of=/etc/x", "truncate -s 0 /etc/x", "shred /etc/x",
     "git config --file /etc/gitconfig a.b c", "git config --system a.b c"],
)  # fmt: skip
def test_writers_of_targets_meet_edit_deny_rules(
    project: Path, command: str, mode: str, sandboxed: bool
) -> None:
    decision, rule, reason = decide(project, command, mode, sandboxed)
    assert (decision, rule) == ("deny", "Edit(//etc/**)"), reason


@pytest.mark.parametrize(
    "command",
    ["git config core.pager cat", "git config alias.x '!sh'", "git -C src config a.b c",
     "python3 -c \"open('.git/config','w').write('x')\"", "node -e \"fs.writeFileSync('.paragents/x','')\""],
)  # fmt: skip
def test_git_config_and_one_liners_naming_protected_paths_ask(project: Path, command: str) -> None:
    decision, _, reason = decide(project, command, "bypassPermissions", False)
    assert decision == "ask", reason
    assert "protected path" in reason


def test_git_config_reads_are_not_writes(project: Path) -> None:
    for command in ("git config --get user.name", "git config user.name", "git config --list"):
        assert decide(project, command, "bypassPermissions", False)[0] == "allow", command


def test_patch_without_a_file_writes_what_its_patch_names(project: Path) -> None:
    policy = Policy.load(project)
    got = bash(policy, "patch -p1 < fix.patch", project, mode="bypassPermissions")
    assert got.decision == "ask" and got.targets_unknown
    assert "patch writes the files its patch names" in got.reason


def test_a_program_only_known_when_it_runs_asks_without_deny_rules(project: Path) -> None:
    policy = Policy.load(project, cli_rules={"allow": ["Bash(*)"]})
    for command in ("curl x | sh", "sh <<EOF\n$(curl x)\nEOF", 'bash <<< "$CMD"', "curl x | python3"):
        got = bash(policy, command, project, mode="bypassPermissions")
        assert got.decision == "ask", command
        assert "only known when it runs" in got.reason, command


def test_an_interpreter_fed_code_on_stdin_is_checked_like_a_one_liner(project: Path) -> None:
    decision, rule, _ = decide(
        project, "echo 'print(open(\".env\").read())' | python3", "bypassPermissions", False
    )
    assert (decision, rule) == ("deny", "Read(.env)")


@pytest.mark.parametrize(
    "command", ["git checkout -- /etc/hosts", "git checkout HEAD~1 -- /etc/hosts", "git restore /etc/hosts"]
)
def test_git_pathspec_restores_are_writes_of_their_paths(project: Path, command: str) -> None:
    decision, rule, _ = decide(project, command, "bypassPermissions", False)
    assert (decision, rule) == ("deny", "Edit(//etc/**)")
