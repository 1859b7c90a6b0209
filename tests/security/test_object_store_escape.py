"""Escape suite: a lane rewrites the objects of the main branch's history (attack report, escape 8).

The lane's sandbox had the repository's common ``objects/`` writable: a python one-liner replaced the
loose object of ``main:app.py`` with ``print("EVIL from lane")`` by ``os.replace``, and every
checkout, lane and clone then read the substituted content under the old name. Now the lane gets
its own object store in the sandbox (the real one read-only as its alternate) and paragents imports
its new objects after each command the way git's receive quarantine does: an object whose content
does not match its name is refused, and a branch whose new commit needs one is put back.

Evidence on the host: ``git show main:app.py`` in the main checkout, a lane made afterwards,
``git fsck``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from paragents import paths
from tests.security.conftest import Host, Hostile, git_repo, require_bwrap

SANDBOX = {"sandbox": {"mode": "required", "autoAllow": True}}
REPLACE = """
import os, subprocess, zlib
def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True).stdout.strip()
common, oid = git("rev-parse", "--git-common-dir"), git("rev-parse", "main:app.py")
body = b'print("EVIL from lane")\\n'
data = zlib.compress(b"blob %d\\0" % len(body) + body)
for objects in (common + "/objects", common + "/objects/.paragents-common"):
    folder = os.path.join(objects, oid[:2])
    try:
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "tmp"), "wb") as f:
            f.write(data)
        os.replace(os.path.join(folder, "tmp"), os.path.join(folder, oid[2:]))
        print("replaced in", objects)
    except OSError as exc:
        print("refused in", objects, exc.strerror)
print(git("show", "main:app.py"))
"""


@pytest.fixture(autouse=True)
def _bwrap() -> None:
    require_bwrap()


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()


async def test_a_lane_cannot_replace_an_object_of_main(host: Host, hostile: Hostile) -> None:
    repo = git_repo(host.root / "project", {"app.py": "print('hi')\n", "replace.py": REPLACE})
    rt = await hostile.open(repo, **SANDBOX)
    view = await rt.lifecycle.new_session("ol", lane=True)
    out = await hostile.attack(view, "python3 replace.py")
    assert "refused in" in out[0] and "do not match their names" in out[0], out[0]
    assert git(repo, "show", "main:app.py") == "print('hi')"
    assert (
        "hash-path mismatch"
        not in subprocess.run(["git", "fsck"], cwd=repo, capture_output=True, text=True).stderr
    )
    later = await rt.lifecycle.new_session(
        "ol2", lane=True
    )  # a lane made afterwards checks out the real content
    assert (later.workdir / "app.py").read_text() == "print('hi')\n"


async def test_a_commit_made_of_a_forged_object_is_put_back(host: Host, hostile: Hostile) -> None:
    """The lane commits a tree naming an object whose content does not match its name: the object is
    refused, so the commit cannot be completed, and the lane's branch goes back where it was."""
    repo = git_repo(host.root / "project")
    rt = await hostile.open(repo, **SANDBOX)
    view = await rt.lifecycle.new_session("api", lane=True)
    before = git(repo, "rev-parse", "paragents/api")
    forged = "ab" * 20
    attack = (
        'O="$(git rev-parse --git-common-dir)/objects" && mkdir -p "$O/ab" && '
        "python3 -c \"import zlib,sys; sys.stdout.buffer.write(zlib.compress(b'blob 5\\0evil\\n'))\" "
        f'> "$O/ab/{forged[2:]}" && '
        f"T=$(printf '100644 blob {forged}\\tx.txt\\n' | git mktree) && "
        'C=$(git commit-tree "$T" -p HEAD -m forged) && git update-ref refs/heads/paragents/api "$C" && '
        "git log --oneline -1"
    )
    out = await hostile.attack(view, attack)
    assert "forged" in out[0] and "put back" in out[0], out[0]
    assert git(repo, "rev-parse", "paragents/api") == before
    fsck = subprocess.run(["git", "fsck", "--strict"], cwd=repo, capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    assert any((paths.state_dir() / "quarantine").iterdir())  # what was refused is kept aside


async def test_an_honest_commit_comes_home_and_the_private_store_empties(
    host: Host, hostile: Hostile
) -> None:
    repo = git_repo(host.root / "project")
    rt = await hostile.open(repo, **SANDBOX)
    view = await rt.lifecycle.new_session("api", lane=True)
    out = await hostile.attack(
        view, "echo two > two.txt && git add -A && git commit -qm two && git log --oneline -1"
    )
    assert "two" in out[0], out[0]
    assert git(repo, "show", "paragents/api:two.txt") == "two"  # readable in the main checkout at once
    subprocess.run(["git", "fsck", "--strict"], cwd=repo, check=True, capture_output=True)
    from paragents.tools.git_objects import store_dir  # (here: the module is new)

    store = store_dir(repo / ".git" / "worktrees" / "api") / "objects"
    assert [p for p in store.rglob("*") if p.is_file() and "info" not in p.parts] == []
