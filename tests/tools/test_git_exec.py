"""The hardened git runner (paragents/tools/git_exec.py, git_config.py) against a repository whose
config names a program for every key git has: no git command paragents runs may start one."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from paragents.tools.git_config import (
    ConfigEntry,
    GitConfigRefused,
    internal_overrides,
    neutral_value,
    parse_config_list,
    user_overrides,
)
from paragents.tools.git_exec import command_argv, git_env, needs_listing, run_git, run_git_sync

IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@e",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@e",
}


def sh(cwd: Path, *args: str) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), **IDENTITY}
    return subprocess.run(args, cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def evil(tmp_path: Path) -> tuple[Path, Path]:
    """(repo, marker dir): a repository whose config and attributes name a program everywhere."""
    marks, repo = tmp_path / "marks", tmp_path / "repo"
    marks.mkdir()
    repo.mkdir()
    prog = tmp_path / "evil.sh"
    prog.write_text(f'#!/bin/sh\necho "$0 $*" >> {marks}/ran\ncat\n')
    prog.chmod(0o755)
    sh(repo, "git", "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("one\ntwo\n")
    sh(repo, "git", "add", "-A")
    sh(repo, "git", "commit", "-qm", "init")
    sh(repo, "git", "checkout", "-qb", "side")
    (repo / "a.txt").write_text("one\nside\n")
    sh(repo, "git", "commit", "-qam", "side")
    sh(repo, "git", "checkout", "-q", "main")
    (repo / "a.txt").write_text("one\nmain\n")
    sh(repo, "git", "commit", "-qam", "main")
    keys = [
        "core.fsmonitor", "core.pager", "core.editor", "core.askPass", "core.sshCommand", "diff.external",
        "diff.tc.textconv", "diff.tc.command", "filter.Evil Name.clean", "filter.Evil Name.smudge",
        "filter.proc.process", "merge.md.driver", "credential.helper", "gpg.program", "sequence.editor",
        "credential.https://example.com.helper", "core.alternateRefsCommand", "pager.status",
    ]  # fmt: skip
    for key in keys:
        sh(repo, "git", "config", key, str(prog))
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("post-checkout", "pre-commit", "post-commit", "reference-transaction", "post-index-change"):
        (hooks / hook).write_text(f"#!/bin/sh\necho {hook} >> {marks}/ran\n")
        (hooks / hook).chmod(0o755)
    sh(repo, "git", "config", "core.hooksPath", str(hooks))
    sh(repo, "git", "config", "commit.gpgSign", "true")
    sh(repo, "git", "config", "log.showSignature", "true")
    (repo / ".gitattributes").write_text("*.txt filter=Evil\\ Name diff=tc merge=md\n*.bin filter=proc\n")
    (repo / "a.txt").write_text("one\nmain\nmore\n")
    (repo / "b.bin").write_text("b\n")
    return repo, marks


COMMANDS = [
    ["status", "--porcelain", "-z", "--untracked-files=all"],
    ["diff"],
    ["diff", "HEAD"],
    ["diff", "main", "side"],
    ["log", "-p", "-2"],
    ["show", "HEAD"],
    ["add", "-A"],
    ["merge-tree", "--write-tree", "main", "side"],
    ["stash", "push", "-u", "-q", "-m", "x"],
    ["worktree", "add", "-q", "../wt", "side"],
    ["checkout", "-q", "side", "--", "a.txt"],
    ["merge", "--no-edit", "side"],
    ["rev-parse", "HEAD"],
    ["gc", "--auto"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(a[:2]) for a in COMMANDS])
def test_no_program_of_the_repository_runs(evil: tuple[Path, Path], args: list[str]) -> None:
    repo, marks = evil
    done = run_git_sync(args, repo, env=IDENTITY, timeout=60)
    assert not (marks / "ran").exists(), (marks / "ran").read_text()
    assert b"cannot read the git config" not in done.err


async def test_a_commit_runs_no_hook_and_no_gpg(evil: tuple[Path, Path]) -> None:
    repo, marks = evil
    added = await run_git(["add", "-A"], repo, env=IDENTITY)
    committed = await run_git(["commit", "-qm", "x"], repo, env=IDENTITY)
    assert (added.code, committed.code) == (0, 0), committed.err
    assert not (marks / "ran").exists(), (marks / "ran").read_text()


def test_the_same_file_with_plain_git_would_run_them(evil: tuple[Path, Path]) -> None:
    """The fixture is hostile for real: plain git runs its programs (so the tests above mean it)."""
    repo, marks = evil
    subprocess.run(["git", "status"], cwd=repo, capture_output=True, check=False)
    subprocess.run(["git", "add", "-A"], cwd=repo, capture_output=True, check=False)
    ran = (marks / "ran").read_text()
    assert "evil.sh" in ran and "post-index-change" in ran


def test_a_submodule_pointing_at_a_hostile_git_dir_runs_nothing(tmp_path: Path) -> None:
    marks, repo = tmp_path / "marks", tmp_path / "repo"
    marks.mkdir()
    repo.mkdir()
    sh(repo, "git", "init", "-q")
    sub = repo / "sub"
    sub.mkdir()
    sh(sub, "git", "init", "-q")
    (sub / "f.txt").write_text("x\n")
    sh(sub, "git", "add", "-A")
    sh(sub, "git", "commit", "-qm", "s")
    sh(repo, "git", "add", "sub")
    sh(repo, "git", "commit", "-qm", "with sub")
    prog = tmp_path / "evil.sh"
    prog.write_text(f"#!/bin/sh\necho ran >> {marks}/ran\ncat\n")
    prog.chmod(0o755)
    sh(sub, "git", "config", "filter.subevil.clean", str(prog))
    sh(sub, "git", "config", "core.fsmonitor", str(prog))
    (sub / ".gitattributes").write_text("* filter=subevil\n")
    (sub / "f.txt").write_text("changed\n")
    done = run_git_sync(["status", "--porcelain"], repo, timeout=60)
    assert done.code == 0 and not (marks / "ran").exists()


def test_every_program_key_of_any_scope_gets_a_harmless_value() -> None:
    entries = [
        ConfigEntry("local", "filter.Evil Name.clean", "x"),
        ConfigEntry("worktree", "core.fsmonitor", "x"),
        ConfigEntry("global", "merge.md.driver", "x"),
        ConfigEntry("local", "credential.https://h.helper", "x"),
        ConfigEntry("local", "protocol.ext.allow", "always"),
        ConfigEntry("global", "user.name", "Ada"),
        ConfigEntry("global", "core.excludesfile", "~/.gitignore"),
        ConfigEntry("local", "core.excludesfile", "mine"),
        ConfigEntry("local", "user.email", "a@b"),
    ]
    pairs = dict(internal_overrides(entries))
    assert pairs["filter.Evil Name.clean"] == "" and pairs["filter.Evil Name.process"] == ""
    assert pairs["filter.Evil Name.required"] == "false"
    assert pairs["core.fsmonitor"] == "false" and pairs["merge.md.driver"] == "false"
    assert pairs["credential.https://h.helper"] == "" and pairs["protocol.ext.allow"] == "never"
    assert pairs["core.hooksPath"] == "/dev/null" and pairs["protocol.allow"] == "never"
    assert pairs["user.name"] == "Ada" and "core.excludesfile" not in pairs  # the repository sets its own
    assert neutral_value("remote.origin.receivepack") == "false" and neutral_value("user.name") is None


def test_a_push_keeps_the_users_global_programs_but_never_the_repositorys() -> None:
    entries = [
        ConfigEntry("global", "core.sshcommand", "ssh -i ~/.ssh/work"),
        ConfigEntry("local", "core.sshcommand", "/tmp/evil"),
        ConfigEntry("local", "remote.origin.receivepack", "/tmp/evil"),
        ConfigEntry("local", "core.hookspath", "/tmp/hooks"),
    ]
    pairs = dict(user_overrides(entries))
    assert pairs["core.sshcommand"] == "ssh -i ~/.ssh/work"
    assert pairs["remote.origin.receivepack"] == "git-receive-pack" and pairs["core.hooksPath"] == "/dev/null"
    assert dict(user_overrides(entries[1:]))["core.sshcommand"] == "ssh"
    with pytest.raises(GitConfigRefused, match=r"credential\.helper"):
        user_overrides([ConfigEntry("local", "credential.helper", "!evil")])


def test_parse_config_list_reads_scopes_keys_and_valueless_keys() -> None:
    raw = b"global\0user.name\nAda\0local\0foo.bar\0command\0x.y\nz\0"
    assert parse_config_list(raw) == [
        ConfigEntry("global", "user.name", "Ada"),
        ConfigEntry("local", "foo.bar", None),
    ]


def test_argv_flags_and_listing_choice() -> None:
    assert command_argv(["diff", "a", "b"])[:5] == [
        "git",
        "--no-pager",
        "diff",
        "--no-ext-diff",
        "--no-textconv",
    ]
    assert "--ignore-submodules=dirty" in command_argv(["status", "--porcelain"])
    assert command_argv(["stash", "push", "-u"]) == ["git", "--no-pager", "stash", "push", "-u"]
    assert not needs_listing(["rev-parse", "HEAD"]) and needs_listing(["add", "-A"])
    assert not needs_listing(["worktree", "prune"]) and needs_listing(["worktree", "add", "x"])


def test_git_env_holds_no_secret_and_no_redirection() -> None:
    base = {"PATH": "/bin", "HOME": "/h", "PARAGENTS_SERVE_KEY": "k", "OPENAI_API_KEY": "k", "GIT_DIR": "/x"}
    env = git_env({**base, "GIT_EXTERNAL_DIFF": "evil", "GIT_SSH_COMMAND": "evil"})
    assert not {"PARAGENTS_SERVE_KEY", "OPENAI_API_KEY", "GIT_DIR"} & set(env)
    assert (
        env["GIT_EXTERNAL_DIFF"] == ""
        and env["GIT_SSH_COMMAND"] == "false"
        and env["GIT_CONFIG_GLOBAL"] == "/dev/null"
    )
