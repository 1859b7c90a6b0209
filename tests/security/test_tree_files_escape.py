"""Escape suite: what a session leaves in a tree it can write (the project, a lane) as a *kind* of file
paragents then reads, copies or writes on the host (issue 25; the same class as
test_instructions_symlink_escape.py, where a sandboxed ``ln -s .env AGENTS.md`` put ``.env`` into
the system prompt).

A sandboxed command can make any name of the project a symbolic link (to ``~/.ssh/id_rsa``, to
paragents' ``serve.json``, to a folder outside), a FIFO or a huge file. Each test plants what such a
command leaves and runs paragents' real host-side code on it (``paragents trust --show``, MCP server
trust, lane creation with ``.worktreeinclude``, the lockfile check, the config loader, an "always"
answer saved to the project); the evidence is on the host: what was printed, trusted or written.
The readers now go through :mod:`paragents.treefiles` (regular files only, never through a link)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from paragents.backends import LaneSpec
from paragents.backends.base import FileProblem
from paragents.backends.local import LocalBackend
from paragents.config import ConfigError, McpServerSettings, McpSettings, load_config
from paragents.conflicts.reads import ReadTracker
from paragents.lanes import LaneError, create_lane
from paragents.lanes.integrity import lane_pins
from paragents.lanes.setup import lockfile_hashes
from paragents.mcp.project import load_servers
from paragents.permissions import Policy
from paragents.store import Store
from tests.patience import HANG_GUARD_S
from tests.security.conftest import Host, git_repo
from tests.trusting import trusted

CLI = [sys.executable, "-c", "from paragents.cli import main; main()"]


@pytest.fixture
async def store(host: Host) -> AsyncIterator[Store]:
    opened = await Store.open(host.state / "paragents.db")
    try:
        yield opened
    finally:
        await opened.close()


def test_trust_show_never_prints_what_a_setup_file_link_points_at(host: Host) -> None:
    """``.paragents/worktree.toml`` -> ``~/.ssh/id_rsa``: the trust review read the key through the
    link and printed it as the file's "(unreadable)" text. Now the link is listed, still untrusted,
    as a link."""
    project = git_repo(host.root / "project")
    (project / ".paragents").mkdir()
    (project / ".paragents" / "worktree.toml").symlink_to(host.home / ".ssh" / "id_rsa")
    shown = subprocess.run([*CLI, "trust", "--show", "--dir", str(project)], capture_output=True, text=True)
    out = shown.stdout + shown.stderr
    assert host.secrets["ssh"] not in out
    assert ".paragents/worktree.toml" in out and "symbolic link" in out, out


def test_a_project_settings_link_outside_never_trusts_the_projects_mcp_servers(host: Host) -> None:
    """``.claude/settings.json`` -> a file outside the project that turns every project server on
    (another project's settings): the link's real path was outside, so it counted as the user's
    own file and the ``.mcp.json`` server the model wrote would start unasked, unsandboxed."""
    project = git_repo(host.root / "project")
    elsewhere = host.root / "other-project" / ".claude"
    elsewhere.mkdir(parents=True)
    (elsewhere / "settings.json").write_text(json.dumps({"enableAllProjectMcpServers": True}))
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").symlink_to(elsewhere / "settings.json")
    evil = {"command": "sh", "args": ["-c", f"touch {host.evidence_dir}/ran"]}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"evil": evil}}))
    entries, _problems = load_servers(project, McpSettings(), [project / ".claude" / "settings.json"])
    assert entries["evil"].settings == McpServerSettings.model_validate(evil)
    assert entries["evil"].trust != "trusted"


def _repo_with_link_to_ssh(host: Host) -> Path:
    """A repository whose HEAD holds ``conf`` as a link to ``~/.ssh`` and whose working tree (as a
    session left it) has a real ``conf/authorized_keys``, ignored and named by .worktreeinclude."""
    repo = host.root / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    (repo / "conf").symlink_to(host.home / ".ssh")
    (repo / ".gitignore").write_text("conf/authorized_keys\n.env\n")
    (repo / ".worktreeinclude").write_text("conf/authorized_keys\n.env\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=repo, check=True)
    trusted(repo)
    (repo / "conf").unlink()
    (repo / "conf").mkdir()
    (repo / "conf" / "authorized_keys").write_text("ssh-ed25519 ATTACKER\n")
    return repo


async def test_a_worktreeinclude_copy_never_writes_through_a_lane_folder_link(
    host: Host, store: Store
) -> None:
    """The new lane checks ``conf`` out as the committed link to ``~/.ssh``; copying the included
    ``conf/authorized_keys`` into the lane wrote the attacker's key into the user's ``~/.ssh``."""
    repo = _repo_with_link_to_ssh(host)
    lane = Path((await create_lane(store, repo, "l")).lane.path)
    assert (lane / "conf").is_symlink()
    assert not (host.home / ".ssh" / "authorized_keys").exists()


async def test_a_worktreeinclude_link_to_a_secret_is_not_copied_into_the_lane(
    host: Host, store: Store
) -> None:
    """An included ``.env`` that is a link to ``~/.ssh/id_rsa`` is not carried into the new lane (the
    lane's sandbox and paragents' readers would find it there under a name the user allowed)."""
    repo = git_repo(host.root / "repo", {".gitignore": ".env\n", ".worktreeinclude": ".env\n"})
    trusted(repo)
    (repo / ".env").symlink_to(host.home / ".ssh" / "id_rsa")
    lane = Path((await create_lane(store, repo, "l")).lane.path)
    assert not os.path.lexists(lane / ".env")


async def test_a_lockfile_fifo_never_hangs_the_host(host: Host) -> None:
    """``mkfifo uv.lock`` in a lane: the host's lockfile check (lane list, the dependencies refresh,
    lane setup) opened it to hash it and blocked forever. Now it reads as absent, at once."""
    lane = git_repo(host.root / "lane")
    os.mkfifo(lane / "uv.lock")
    try:
        hashes = await asyncio.wait_for(asyncio.to_thread(lockfile_hashes, lane), HANG_GUARD_S)
    finally:  # a hung reader (the bug) is released: a writer opens the FIFO and closes it
        os.close(os.open(lane / "uv.lock", os.O_RDWR | os.O_NONBLOCK))
    assert "uv.lock" not in hashes


def test_a_linked_project_config_is_refused_by_name(host: Host) -> None:
    """``runtime_config.json`` -> paragents' ``serve.json``: read on the host and validated, its keys
    and values could reach the error on screen. Now the link is refused, named, never read."""
    project = git_repo(host.root / "project")
    (project / "runtime_config.json").symlink_to(host.config / "serve.json")
    with pytest.raises(ConfigError) as caught:
        load_config(project)
    assert "runtime_config.json" in str(caught.value) and "symbolic link" in str(caught.value)
    assert host.secrets["serve"] not in str(caught.value)


def test_an_always_answer_never_writes_through_a_link_left_in_the_project(host: Host) -> None:
    """``.paragents/permissions.local.json.tmp`` -> ``~/.bashrc``: saving an "always" rule wrote the
    rules file's JSON through the link, over the user's file."""
    project = git_repo(host.root / "project")
    bashrc = host.home / ".bashrc"
    bashrc.write_text("export PATH=$HOME/bin:$PATH\n")
    (project / ".paragents").mkdir()
    (project / ".paragents" / "permissions.local.json.tmp").symlink_to(bashrc)
    policy = Policy.load(project)
    saved = policy.remember_always(["Bash(ls)"])
    assert bashrc.read_text() == "export PATH=$HOME/bin:$PATH\n"
    assert "Bash(ls)" in json.loads(saved.read_text())["permissions"]["allow"]


async def test_a_stale_read_check_never_reads_what_a_command_put_in_place_of_the_file(host: Host) -> None:
    """A session read ``notes.txt``, then its command replaced it with a FIFO, then with a link to
    ``~/.ssh/id_rsa``: the stale-read check before its next write read the file again on the host
    (blocking forever on the FIFO; the key went into the diff told to the model)."""
    project = git_repo(host.root / "project")
    notes = project / "notes.txt"
    notes.write_text("first\n")
    tracker = ReadTracker()
    tracker.saw("s1", str(notes), hashlib.sha256(b"first\n").hexdigest())
    notes.unlink()
    os.mkfifo(notes)
    try:
        stale = await asyncio.wait_for(tracker.stale("s1", str(notes)), HANG_GUARD_S)
    finally:
        os.close(os.open(notes, os.O_RDWR | os.O_NONBLOCK))
    assert stale is not None and stale.digest == ""
    notes.unlink()
    notes.symlink_to(host.home / ".ssh" / "id_rsa")
    stale = await tracker.stale("s1", str(notes))
    assert stale is not None and host.secrets["ssh"] not in stale.diff + str(stale.text)


async def test_a_lane_backend_read_of_a_fifo_returns_an_error_at_once(host: Host) -> None:
    """``mkfifo out.log`` in a lane, then the model's read of it through the lane backend: the open
    blocked the event loop itself (the whole app). Now it is refused as not a regular file."""
    repo = git_repo(host.root / "repo")
    backend = LocalBackend(LaneSpec(host.root, "t", "0" * 40, worktree=repo))
    os.mkfifo(repo / "out.log")
    try:
        with pytest.raises(FileProblem) as caught:
            await asyncio.wait_for(backend.read_file("out.log"), HANG_GUARD_S)
    finally:
        os.close(os.open(repo / "out.log", os.O_RDWR | os.O_NONBLOCK))
    assert "FIFO" in str(caught.value)


async def test_a_fifo_in_place_of_a_lanes_git_file_never_hangs_the_host(host: Host, store: Store) -> None:
    """``rm .git && mkfifo .git`` in a lane: the host's lane check before every git command opened
    it and blocked the event loop forever. Now the lane is refused, at once, naming its .git."""
    repo = git_repo(host.root / "repo")
    lane = Path((await create_lane(store, repo, "l", setup=False)).lane.path)
    (lane / ".git").unlink()
    os.mkfifo(lane / ".git")
    try:
        with pytest.raises(LaneError, match=r"\.git file cannot be read"):
            await asyncio.wait_for(asyncio.to_thread(lane_pins, lane), HANG_GUARD_S)
    finally:
        os.close(os.open(lane / ".git", os.O_RDWR | os.O_NONBLOCK))
