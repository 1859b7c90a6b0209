"""Escape suite: a lane points its HEAD (or its branch) at the user's branch, and paragents' own
host-side commit lands there without verify or a dialog (attack report, escape 4).

A fan-out candidate ran ``git symbolic-ref HEAD refs/heads/main`` (or wrote ``<gitdir>/HEAD`` with
``git log --output``); fan-out's "commit each candidate" then ran ``git add -A && git commit`` in the
lane, on whatever HEAD named: ``main`` got the candidate's code. ``paragents lanes merge --commit``
committed on ``main`` before verify ran. Now the lane's HEAD is read-only in the sandbox, every
host-side commit is plumbing on the lane's own branch (``update-ref --no-deref``), and a lane whose
HEAD is not its branch (sandbox off) or whose branch file became a symbolic ref is refused.

Evidence on the host: ``main`` still at its first commit with its own ``app.py``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from paragents.events import PermissionAnswer
from paragents.fanout.compare import compare
from paragents.fanout.group import start_best_of
from paragents.fanout.request import FanoutRequest
from paragents.llm.replay import ScriptedResponse
from paragents.sessions import Runtime
from tests.runtime_env import Collector
from tests.security.conftest import Host, Hostile, git_repo, require_bwrap

MODES = ["required", "off"]
REDIRECT = (
    "B=$(git rev-parse HEAD); echo 'print(\"pwned main\")' > app.py; "
    "git log -1 $B --format='tformat:ref: refs/heads/main' --output=\"$(git rev-parse --git-dir)/HEAD\"; "
    "git symbolic-ref HEAD refs/heads/main; true"
)
"""The attacker's two ways of moving HEAD (the second needs no ``git symbolic-ref`` rule)."""
CLI = [sys.executable, "-c", "from paragents.cli import main; main()"]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()


def sandbox(mode: str) -> dict[str, object]:
    if mode != "off":
        require_bwrap()
    return {"mode": mode, "autoAllow": True}


def call(command: str) -> ScriptedResponse:
    args = json.dumps({"command": command, "timeout": 60})
    return ScriptedResponse.from_message(tool_calls=[{"id": "c1", "name": "run_command", "arguments": args}])


@pytest.mark.parametrize("mode", MODES)
async def test_a_fanout_candidate_pointing_its_head_at_main_never_lands_there(
    host: Host, hostile: Hostile, mode: str
) -> None:
    repo = git_repo(host.root / "project")
    init = git(repo, "rev-parse", "main")
    done = ScriptedResponse.from_message(content="done")
    hostile.server.add([call(REDIRECT), done], session="fix-it-1")
    fix = json.dumps({"path": "app.py", "content": "print('fixed')\n"})
    hostile.server.add(
        [
            ScriptedResponse.from_message(tool_calls=[{"id": "c1", "name": "write_file", "arguments": fix}]),
            done,
        ],
        session="fix-it-2",
    )
    cfg = {"base_url": hostile.server.base_url, "model": "m", "max_retries": 0, "sandbox": sandbox(mode)}
    rt = await Runtime.create(repo, cli_overrides=cfg, db_path=host.state / "db.sqlite")
    sink = Collector()
    rt.set_sink(sink)
    sink.answers.extend([PermissionAnswer("allow_once")] * 8)
    try:
        group = await start_best_of(rt, FanoutRequest(2, "fix it"), open_panel=False)
        await group.done.wait()
        cmp = await compare(rt.store.fanout, group.id)
        hostile_candidate, honest = cmp.find(1), cmp.find(2)
    finally:
        await rt.shutdown()
    assert git(repo, "rev-parse", "main") == init  # the user's branch did not move
    assert git(repo, "show", "main:app.py") == "print('hi')"
    assert honest.record.evidence.get("head")  # an honest candidate is still committed on its branch
    lane = Path(hostile_candidate.record.lane_path or "")
    if mode == "off":  # nothing stops the write unsandboxed: paragents refuses to commit there
        assert (repo / ".git/worktrees/fix-it-1/HEAD").read_text().strip() == "ref: refs/heads/main"
        error = str(hostile_candidate.record.evidence.get("error"))  # stored shortened: head and tail
        assert "lane fix-it-1" in error and "merges nothing there" in error, error
        assert git(repo, "rev-parse", "paragents/fix-it-1") == init  # nothing committed anywhere
    else:  # read-only HEAD: the write failed, the work is on the candidate's own branch
        assert git(lane, "symbolic-ref", "HEAD") == "refs/heads/paragents/fix-it-1"
        assert git(repo, "show", "paragents/fix-it-1:app.py") == 'print("pwned main")'


def lanes_merge(host: Host, repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PARAGENTS_CONFIG_DIR": str(host.config), "PARAGENTS_STATE_DIR": str(host.state)}
    return subprocess.run(
        [*CLI, "lanes", "merge", *args, "--dir", str(repo)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("how", ["HEAD", "branch symref"])
async def test_lanes_merge_commit_writes_only_the_lanes_branch(
    host: Host, hostile: Hostile, mode: str, how: str
) -> None:
    """``paragents lanes merge NAME --commit`` with ``lanes.verify`` set committed on ``main`` before
    verify ran. Now the commit goes on the lane's branch (then verify runs and refuses), or, when
    the lane's HEAD or branch was redirected and nothing stopped it, the lane is refused."""
    repo = git_repo(host.root / "project")
    (repo / "runtime_config.json").write_text(json.dumps({"lanes": {"verify": "exit 1"}}))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "config")
    init = git(repo, "rev-parse", "main")
    subprocess.run([*CLI, "trust", "--yes", "--dir", str(repo)], check=True, capture_output=True)
    rt = await hostile.open(repo, sandbox=sandbox(mode))
    view = await rt.new_session("api", lane=True)
    if how == "HEAD":
        attack = REDIRECT.replace('"pwned main"', '"unreviewed"')
    else:
        attack = (
            "echo 'print(\"unreviewed\")' > app.py; "
            "echo 'ref: refs/heads/main' > "
            '"$(git rev-parse --git-common-dir)/refs/heads/paragents/api"; true'
        )
    out = await hostile.attack(view, attack)
    await rt.shutdown()
    hostile.runtime = None
    done = lanes_merge(host, repo, "api", "--strategy", "squash", "--commit", "lane work")
    assert git(repo, "rev-parse", "main") == init, done.stdout + done.stderr
    assert git(repo, "show", "main:app.py") == "print('hi')"
    assert done.returncode != 0
    if mode == "off":
        said = done.stdout + done.stderr
        assert "lane api" in said and ("HEAD is 'refs/heads/main'" in said or "symbolic ref" in said), said
    else:  # the redirect was stopped or put back; the commit is the lane's, verify refused the merge
        if how == "branch symref":
            assert "symbolic ref" in out[0] and "put back" in out[0], out[0]
        assert git(repo, "log", "-1", "--format=%s", "paragents/api") == "lane work", done.stderr
        assert git(repo, "show", "paragents/api:app.py") == 'print("unreviewed")'
        assert done.returncode == 4 and "verify failed" in done.stderr + done.stdout
