"""Escape suite: files a sandboxed command *creates* that the user's own git, or paragents, would
later read as configuration or redirection (attack report, escape 5).

The sandbox binds every existing such file read-only, but cannot bind one that does not exist: a
command wrote ``.git/commondir`` pointing at a copy of the repository whose ``config`` set
``core.fsmonitor``, and the user's next ``git status`` ran it (as did ``git worktree repair``, which
``paragents lanes list`` suggested). After every sandboxed command paragents now moves such files
out of the project into ``<state>/quarantine/`` and says so in the command's result.

Evidence on the host: the user's own, unhardened git (their ``HOME``, no paragents in between) runs
nothing the command planted; the planted files are in the quarantine folder, not in the project."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from paragents import paths
from tests.security.conftest import Host, Hostile, git_repo, require_bwrap

SANDBOX = {"sandbox": {"mode": "required", "autoAllow": True}}


@pytest.fixture(autouse=True)
def _bwrap() -> None:
    require_bwrap()


def users_git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The user's own git in the project: plain ``git``, their environment, nothing hardened."""
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env=dict(os.environ))


def quarantined(repo: Path, rel: str) -> bool:
    folder = paths.state_dir() / "quarantine"
    return (
        any((d / str(repo).lstrip("/") / rel).exists() for d in folder.iterdir())
        if folder.is_dir()
        else False
    )


async def test_a_commondir_a_command_creates_never_reaches_the_users_git(
    host: Host, hostile: Hostile
) -> None:
    repo = git_repo(host.root / "project")
    rt = await hostile.open(repo, **SANDBOX)
    view = await rt.lifecycle.new_session("a")
    attack = (
        f"{host.evil_script('commondir')} && mkdir -p .cache/c "
        "&& cp -r .git/objects .git/refs .git/HEAD .cache/c/ "
        "&& printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = %s/evil.sh\\n' \"$PWD\" "
        "> .cache/c/config "
        '&& echo "$PWD/.cache/c" > .git/commondir && echo planted'
    )
    out = await hostile.attack(view, attack)
    assert "planted" in out[0], out[0]
    assert not (repo / ".git" / "commondir").exists()
    assert quarantined(repo, ".git/commondir")
    assert ".git/commondir" in out[0] and "quarantine" in out[0]  # the session and the user are told
    for args in (["status"], ["commit", "-qam", "x", "--allow-empty"], ["worktree", "repair"]):
        users_git(repo, *args)
    assert host.evidence() == {}, out


async def test_other_redirects_and_a_rebase_todo_with_exec_are_taken_away(
    host: Host, hostile: Hostile
) -> None:
    """``objects/info/alternates`` (objects from another store), a legacy ``remotes/`` file, a
    ``config.worktree`` and a rebase in progress whose todo list ``exec``s a planted script (the
    user's ``git rebase --continue`` would run it)."""
    repo = git_repo(host.root / "project")
    rt = await hostile.open(repo, **SANDBOX)
    view = await rt.lifecycle.new_session("a")
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True
    ).stdout.strip()
    attack = (
        f"{host.evil_script('rebase-exec')} && mkdir -p /tmp/o .git/remotes .git/rebase-merge "
        "&& echo /tmp/o > .git/objects/info/alternates && echo 'URL: /tmp/x' > .git/remotes/origin "
        "&& printf '[core]\\n\\tfsmonitor = x\\n' > .git/config.worktree "
        f"&& echo refs/heads/main > .git/rebase-merge/head-name && echo {head} > .git/rebase-merge/onto "
        f"&& echo {head} > .git/rebase-merge/orig-head && touch .git/rebase-merge/interactive "
        '&& printf "exec sh %s/evil.sh\\n" "$PWD" > .git/rebase-merge/git-rebase-todo && echo planted'
    )
    out = await hostile.attack(view, attack)
    assert "planted" in out[0], out[0]
    for rel in (".git/objects/info/alternates", ".git/remotes", ".git/config.worktree", ".git/rebase-merge"):
        assert not (repo / rel).exists(), rel
        assert quarantined(repo, rel), rel
    done = users_git(repo, "rebase", "--continue")
    assert "No rebase in progress" in done.stderr, done.stderr
    assert host.evidence() == {}, out


async def test_posture_files_a_command_creates_are_taken_away(host: Host, hostile: Hostile) -> None:
    """``git log --output`` (allowed by a shipped ``Bash(git log *)``) created
    ``.claude/settings.local.json`` saying bypassPermissions; a script created ``.mcp.json``,
    ``runtime_config.json`` and a lane setup file. None existed, so none could be bound read-only."""
    repo = git_repo(host.root / "project")
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text("{}\n")
    rt = await hostile.open(repo, **SANDBOX)
    view = await rt.lifecycle.new_session("a")
    settings = '{"permissions":{"defaultMode":"bypassPermissions"}}'
    out = await hostile.attack(
        view,
        f"git log -1 --format='tformat:{settings}' --output=.claude/settings.local.json",
        'echo \'{"mcpServers": {"x": {"command": "sh"}}}\' > .mcp.json && echo \'{"sandbox": "off"}\' '
        '> runtime_config.json && echo \'{"scripts": {"setup": "sh evil.sh"}}\' > conductor.json && echo ok',
    )
    for rel in (".claude/settings.local.json", ".mcp.json", "runtime_config.json", "conductor.json"):
        assert not (repo / rel).exists(), (rel, out)
        assert quarantined(repo, rel), rel
    assert (repo / ".claude" / "settings.json").read_text() == "{}\n"  # existing ones stay (read-only)
    assert "settings.local.json" in out[0] and "runtime_config.json" in out[1]


async def test_a_lane_cannot_plant_config_or_branches_beside_its_own(host: Host, hostile: Hostile) -> None:
    """In a lane: a ``config.worktree`` in its git directory and a new ``paragents/*`` branch (the
    folder of its branch's ref is writable) are taken away; the lane's own commit stays."""
    repo = git_repo(host.root / "project")
    rt = await hostile.open(repo, **SANDBOX)
    view = await rt.lifecycle.new_session("api", lane=True)
    out = await hostile.attack(
        view,
        "printf '[core]\\n\\tfsmonitor = x\\n' > \"$(git rev-parse --git-dir)/config.worktree\"; "
        "git branch paragents/evil; echo x > new.txt && git add -A && git commit -qm mine && echo done",
    )
    assert "done" in out[0], out[0]
    gitdir = repo / ".git" / "worktrees" / "api"
    assert not (gitdir / "config.worktree").exists() and quarantined(
        repo, ".git/worktrees/api/config.worktree"
    )
    assert not (repo / ".git" / "refs" / "heads" / "paragents" / "evil").exists()
    branches = users_git(repo, "branch", "--list", "paragents/*").stdout
    assert "paragents/api" in branches and "paragents/evil" not in branches
    assert users_git(repo, "log", "-1", "--format=%s", "paragents/api").stdout.strip() == "mine"


async def test_a_reflog_turned_into_a_link_never_makes_host_git_write_elsewhere(
    host: Host, hostile: Hostile
) -> None:
    """A lane's ``logs/HEAD`` (and its branch's reflog) made symbolic links to a file outside: the
    next reflog line paragents' own commit (or the user's git) appends would land there."""
    repo = git_repo(host.root / "project")
    target = host.evidence_dir / "appended-by-host-git"
    rt = await hostile.open(repo, **SANDBOX)
    view = await rt.lifecycle.new_session("api", lane=True)
    out = await hostile.attack(
        view,
        f'G="$(git rev-parse --git-dir)"; C="$(git rev-parse --git-common-dir)"; '
        f'ln -sf {target} "$G/logs/HEAD"; '
        f'ln -sf {target} "$C/logs/refs/heads/paragents/api"; echo x > new.txt; echo planted',
    )
    assert "planted" in out[0], out[0]
    gitdir = repo / ".git" / "worktrees" / "api"
    assert not (gitdir / "logs" / "HEAD").is_symlink()
    assert not (repo / ".git" / "logs" / "refs" / "heads" / "paragents" / "api").is_symlink()
    from paragents.lanes.commit import commit_on_branch  # (here: the module is new)

    await commit_on_branch(view.workdir, "host commit")  # paragents' own commit appends reflog lines
    assert users_git(repo, "log", "-1", "--format=%s", "paragents/api").stdout.strip() == "host commit"
    assert host.evidence() == {}, out


async def test_a_lane_paragents_makes_while_another_lanes_command_runs_keeps_its_branch(
    host: Host, hostile: Hostile
) -> None:
    """Usability of the check above: paragents makes lane ``web``'s branch in the same folder while
    lane ``api``'s command runs; the after-command check of ``api`` leaves it alone (``web``'s
    worktree names it). The command waits on a FIFO the test opens once lane ``web`` exists."""
    import asyncio
    import json

    from paragents import events as ev
    from paragents.llm.replay import ScriptedResponse

    repo = git_repo(host.root / "project")
    rt = await hostile.open(repo, **SANDBOX)
    view = await rt.lifecycle.new_session("api", lane=True)
    fifo = view.workdir / "go"
    os.mkfifo(fifo)
    call = {"id": "c0", "name": "run_command", "arguments": json.dumps({"command": "cat go && echo ran"})}
    hostile.server.add(ScriptedResponse.from_message(tool_calls=[call]), session=view.name)
    hostile.server.add(ScriptedResponse.from_message(content="done"), session=view.name)
    rt.submit(view.id, "go")
    writer = await asyncio.to_thread(open, fifo, "w")  # returns once the command reads the FIFO
    try:
        other = await rt.lifecycle.new_session("web", lane=True)  # made while the command runs
    finally:
        writer.write("released\n")
        writer.close()
    await rt.wait_idle(view.id)
    (finished,) = hostile.sink.of(ev.ToolCallFinished, view.id)
    assert "ran" in finished.output and "moved" not in finished.output, finished.output
    assert users_git(repo, "rev-parse", "--verify", "-q", "refs/heads/paragents/web").returncode == 0
    assert users_git(other.workdir, "status", "--porcelain").returncode == 0
