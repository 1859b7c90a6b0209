"""Escape tests of the snapshot agent's channel (paragents/backends/agent.py) through a real Docker
Engine: the agent runs where the lane's code runs, so a hostile lane can answer the protocol with
lies, floods, huge lines, bundles holding ``.git``/``..`` paths, write into the real agent's output or
stop it. None of it may get the host to take a snapshot that was not checked, read or write outside
the lane, keep unbounded output, or hang: each attack ends with the channel closed and the lane's true
snapshot taken by the one-exec path (also checked), and the host shows no evidence."""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from paragents.backend_settings import ContainerSettings
from paragents.backends.agent import MAX_LINE
from paragents.backends.base import LaneSpec
from paragents.backends.bundle import known_commits
from paragents.backends.container import ContainerBackend
from paragents.backends.mirror import Mirror
from tests.backends.engine import Engine, git

TIMEOUT = 3.0
"""The agent's request deadline in these tests (the real one is longer)."""
ANSWER = "read -r _ id max k1 rest\n"
"""The start of every hostile agent: read the request (``SNAP ID MAX KNOWN...``)."""
FIND_AGENT = r"""
for p in /proc/[0-9]*; do
  grep -q "paragents-agent-inde[x]" "$p/cmdline" 2>/dev/null && { echo "${p#/proc/}"; break; }
done
"""

SHAPED = r"""
cd /workspace
export GIT_INDEX_FILE=/tmp/lie-index GIT_AUTHOR_DATE='@0 +0000' GIT_COMMITTER_DATE='@0 +0000' \
  GIT_AUTHOR_NAME=paragents GIT_AUTHOR_EMAIL=paragents@localhost GIT_COMMITTER_NAME=paragents \
  GIT_COMMITTER_EMAIL=paragents@localhost
git add -A; t=$(git write-tree); h=$(git rev-parse HEAD)
c=$(git commit-tree "$t" -p "$h" -m "paragents snapshot")
"""
"""Makes the lane's real snapshot commit ``$c`` of tree ``$t`` on ``$h`` (ids that agree)."""

HOSTILE = {
    "flood": ANSWER + "while :; do printf '%.0s0123456789abcdef' $(seq 1 4096); done",
    "huge line": ANSWER + "printf '%s ' \"$id\"; head -c 50000000 /dev/zero | tr '\\0' 7; sleep 3600",
    # one write (atomic in a pipe): the answer and bytes past it arrive together
    "more than announced": ANSWER
    + "printf '%s %s %s %s 4\\nPACK and more\\n' \"$id\" $k1 $k1 $k1; sleep 3600",
    "over the size limit": ANSWER
    + "echo \"$id $(printf 'a%.0s' $(seq 40)) $k1 $k1 999999999999\"; sleep 3600",
    "short then silent": ANSWER
    + "echo \"$id $(printf 'a%.0s' $(seq 40)) $k1 $k1 1000\"; printf 'PACK'; sleep 3600",
    "silent": ANSWER + "sleep 3600",
    "another request's id": ANSWER + 'echo "0123456789abcdef $k1 $k1 $k1 0"; sleep 3600',
    "unasked output": "echo 'hello host'; " + ANSWER + "sleep 3600",
    "stderr flood": ANSWER + "while :; do printf '%.0sEEEEEEEEEEEEEEEE' $(seq 1 4096) >&2; done",
    "paths for ids": ANSWER + 'echo "$id ../../../etc/passwd /root/.ssh/id_rsa .git/config 10"; sleep 3600',
    "a lie: a commit never sent": ANSWER + SHAPED + 'echo "$id $c $h $t 0"; sleep 3600',
    "a lie: ids that do not agree": ANSWER + "echo \"$id $k1 $k1 $(printf 'c%.0s' $(seq 40)) 0\"; sleep 3600",
    "an error text with escapes": ANSWER + "printf '%s ERR \\033[2J../../x\\a\\n' \"$id\"; sleep 3600",
}
"""Hostile agents: each reads one request and answers it badly (or not at all)."""
WHY: dict[str, str | tuple[str, ...]] = {
    "flood": f"an answer line over {MAX_LINE} bytes",
    "huge line": f"an answer line over {MAX_LINE} bytes",
    "more than announced": "more bytes than its answer holds",
    "over the size limit": "announced 999999999999 bytes, over the",
    "short then silent": f"did not answer within {TIMEOUT:g} s",
    "silent": f"did not answer within {TIMEOUT:g} s",
    "another request's id": "answered another request",
    "unasked output": ("output nobody asked for", "answered another request"),  # before or after asking
    "stderr flood": "bytes on stderr",
    "paths for ids": "ids are not object ids",
    "a lie: a commit never sent": "refused: lane evil sent no bundle for its new snapshot",
    "a lie: ids that do not agree": "not the snapshot commit of its tree and head",
    "an error text with escapes": "said: ?[2J../../x?",
}
"""What the host says about each: the check that cut it off."""

EVIL_BUNDLE = r"""
read -r _ id max k1 rest
cd /workspace
export GIT_INDEX_FILE=/tmp/evil-index GIT_AUTHOR_DATE='@0 +0000' GIT_COMMITTER_DATE='@0 +0000' \
  GIT_AUTHOR_NAME=paragents GIT_AUTHOR_EMAIL=paragents@localhost GIT_COMMITTER_NAME=paragents \
  GIT_COMMITTER_EMAIL=paragents@localhost
blob=$(printf '[core]\n\tfsmonitor = "touch %s"\n' "$MARKER" | git hash-object -w --stdin)
inner=$(printf '100644 blob %s\tconfig\n' "$blob" | git mktree)
tree=$(printf '040000 tree %s\t%s\n100644 blob %s\tok.txt\n' "$inner" "$NAME" "$blob" | git mktree)
head=$(git rev-parse HEAD)
c=$(git commit-tree "$tree" -p "$head" -m "paragents snapshot")
{ printf '# v2 git bundle\n-%s\n%s refs/paragents/snapshot\n\n' "$k1" "$c"
  printf '%s\n^%s\n' "$c" "$k1" | git pack-objects --stdout --revs -q; } > /tmp/evil.bundle
echo "$id $c $head $tree $(wc -c < /tmp/evil.bundle)"
cat /tmp/evil.bundle
sleep 3600
"""
"""A hostile agent answering with a real, well-formed bundle of a commit shaped as a snapshot (so the
id check passes) whose tree holds ``$NAME`` (``.git``, ``..``, ``GIT~1``) with a git config that
would run ``touch $MARKER`` where host git read it."""


@pytest.fixture
async def lane(docker_engine: Engine, lane_repo: Path) -> AsyncIterator[ContainerBackend]:
    spec = LaneSpec(repo=lane_repo, name="evil", base_commit=git(lane_repo, "rev-parse", "HEAD"))
    backend = ContainerBackend(spec, ContainerSettings(host=docker_engine.host), docker_engine.image)
    backend.agent_timeout = TIMEOUT
    await backend.create()
    try:
        yield backend
    finally:
        await backend._remove()
        await backend.close()


def fingerprint(repo: Path) -> dict[str, str]:
    """What an escape would change on the host: the repository's config and hooks, and its refs."""
    config = (repo / ".git" / "config").read_bytes()
    hooks = sorted(p.name for p in (repo / ".git" / "hooks").iterdir())
    refs = git(repo, "for-each-ref", "--format=%(refname)")
    return {"config": hashlib.sha256(config).hexdigest(), "hooks": " ".join(hooks), "refs": refs}


async def truth(lane: ContainerBackend) -> str:
    counted = lane.snapshot_execs
    commit = (await lane._snapshot_exec(await known_commits(lane.spec))).commit
    lane.snapshot_execs = counted
    return commit


async def attacked_snapshot(lane: ContainerBackend, *, cut: bool = True) -> str:
    """Take a snapshot while the agent is hostile: it must end (never hang) through the one-exec
    path, with the channel cut (``cut``; an ERR answer leaves it open); return the agent's note."""
    snap = await asyncio.wait_for(lane.snapshot(), 60)
    assert lane.snapshot_execs == 1, lane.agent_note
    assert lane.agent_note is not None
    if cut:
        assert lane.agent.broken == lane.agent_note and not lane.agent.alive
    assert len(lane.agent._buf) <= MAX_LINE + lane.max_snapshot_bytes  # nothing unbounded kept
    assert snap.commit == await truth(lane)
    return lane.agent_note


@pytest.mark.parametrize("attack", sorted(HOSTILE))
async def test_a_hostile_agent_is_cut_off_and_the_snapshot_is_taken_by_one_exec(
    lane: ContainerBackend, lane_repo: Path, attack: str
) -> None:
    before = fingerprint(lane_repo)
    assert (await lane.exec("echo work > work.txt")).ok
    lane.agent.script = HOSTILE[attack]
    why = await attacked_snapshot(lane, cut=" ERR " not in HOSTILE[attack])
    expected = WHY[attack]
    assert any(text in why for text in ((expected,) if isinstance(expected, str) else expected)), why
    assert "\x1b" not in why and "\x07" not in why  # its text is inert
    after = fingerprint(lane_repo)
    assert after["config"] == before["config"] and after["hooks"] == before["hooks"]
    assert set(after["refs"].split()) - set(before["refs"].split()) <= {"refs/paragents/remote/evil/snapshot"}
    assert "work.txt" in git(lane_repo, "ls-tree", "--name-only", lane.spec.snapshot_ref)


@pytest.mark.parametrize("name", [".git", "..", "GIT~1"])
async def test_an_agents_bundle_with_a_forbidden_path_never_reaches_the_worktree(
    lane: ContainerBackend, lane_repo: Path, tmp_path: Path, name: str
) -> None:
    marker = Path("/var/tmp") / f"paragents-agent-escape-{secrets.token_hex(6)}"
    worktree = tmp_path / "wt"
    subprocess.run(
        ["git", "worktree", "add", "-q", "-b", "paragents/evil", str(worktree), lane.spec.base_commit],
        cwd=lane_repo, check=True, capture_output=True,
    )  # fmt: skip
    mirror = Mirror(lane, worktree)
    await mirror.sync()  # the agent answers honestly once
    before = fingerprint(lane_repo)
    await lane.agent.close()
    lane.agent.script = f"MARKER={marker}; NAME='{name}'\n" + EVIL_BUNDLE
    assert (await lane.exec("echo honest > honest.txt")).ok
    done = await asyncio.wait_for(mirror.sync(fast=True), 60)
    assert lane.snapshot_execs == 1 and lane.agent.broken is not None
    assert "refused by git" in lane.agent.broken  # fsck, or the path check where fsck lets it pass
    assert done.snapshot.commit == await truth(lane)
    assert (worktree / "honest.txt").read_text() == "honest\n"
    assert not (worktree / "ok.txt").exists() and (worktree / ".git").is_file()
    assert not (tmp_path / "config").exists() and not (worktree.parent / "config").exists()
    git(worktree, "status")  # host git in the worktree: the planted config is nowhere it reads
    assert not marker.exists()
    after = fingerprint(lane_repo)
    assert after["config"] == before["config"] and after["hooks"] == before["hooks"]
    assert "incoming" not in after["refs"]


async def test_lane_code_writing_into_the_agents_output_or_stopping_it(lane: ContainerBackend) -> None:
    """The agent's process belongs to the lane's user: its code can write into the agent's stdout
    (``/proc/PID/fd/1``) or stop it. Either closes the channel; snapshots stay right."""
    first = await lane.snapshot()
    assert lane.agent.alive and lane.snapshot_execs == 0
    pid = (await lane.exec(FIND_AGENT)).output.strip()
    assert pid.isdigit()
    forged = f"deadbeefdeadbeef {first.commit} {first.head} {first.tree} 0"
    injected = await lane.exec(f"printf '%s\\n' '{forged}' > /proc/{pid}/fd/1")
    assert injected.ok, injected.output  # the lane's user can do that
    assert (await lane.exec("echo more > more.txt")).ok
    why = await attacked_snapshot(lane)
    assert "nobody asked" in why or "another request" in why
    # a new agent, then stopped by the lane (SIGSTOP): the request times out
    await lane.agent.close()
    assert (await lane.snapshot()).commit == await truth(lane) and lane.agent.alive
    pid = (await lane.exec(FIND_AGENT)).output.strip()
    assert (await lane.exec(f"kill -STOP {pid}")).ok
    assert (await lane.exec("echo stopped > stopped.txt")).ok
    lane.snapshot_execs = 0
    why = await attacked_snapshot(lane)
    assert f"did not answer within {TIMEOUT:g} s" in why
