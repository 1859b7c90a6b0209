"""The lane's snapshot agent (paragents/backends/agent.py) against a real Docker Engine: snapshots go
through one long-lived exec stream, give what the one-exec path gives, and the agent falls back and
comes back when it stops."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path

import pytest

from paragents.backend_settings import ContainerSettings
from paragents.backends import agent as agent_module
from paragents.backends.base import LaneSpec
from paragents.backends.bundle import known_commits
from paragents.backends.container import ContainerBackend
from paragents.backends.remote import Chunk, Stdin
from tests.backends.engine import Engine, git

KILL_AGENT = r"""
for p in /proc/[0-9]*; do
  if grep -q "paragents-agent-inde[x]" "$p/cmdline" 2>/dev/null; then kill -KILL "${p#/proc/}"; fi
done
"""
"""Lane code killing the agent (its process belongs to the lane's user)."""


class Counting(ContainerBackend):
    """A container lane that counts the execs it creates (every exec goes through ``_run``)."""

    execs: int = 0

    async def _run(
        self,
        argv: Sequence[str],
        *,
        on_chunk: Chunk,
        stdin: Stdin = None,
        env: Mapping[str, str] | None = None,
    ) -> int:
        self.execs += 1
        return await super()._run(argv, on_chunk=on_chunk, stdin=stdin, env=env)


@pytest.fixture
async def lane(docker_engine: Engine, lane_repo: Path) -> AsyncIterator[Counting]:
    spec = LaneSpec(repo=lane_repo, name="ag", base_commit=git(lane_repo, "rev-parse", "HEAD"))
    backend = Counting(spec, ContainerSettings(host=docker_engine.host), docker_engine.image)
    await backend.create()
    try:
        yield backend
    finally:
        await backend._remove()
        await backend.close()


async def truth(lane: ContainerBackend) -> str:
    """The snapshot commit the one-exec path makes now (what the agent must have answered); not
    counted in ``snapshot_execs``."""
    counted = lane.snapshot_execs
    commit = (await lane._snapshot_exec(await known_commits(lane.spec))).commit
    lane.snapshot_execs = counted
    return commit


async def test_unchanged_snapshots_are_answered_on_the_open_stream(lane: Counting) -> None:
    first = await lane.snapshot()
    started = lane.execs
    assert lane.agent.starts == 1 and lane.snapshot_execs == 0
    for _ in range(3):
        again = await lane.snapshot()
        assert again.commit == first.commit and not again.changed and again.transferred == 0
    assert lane.execs == started  # no exec created for them
    assert lane.agent.requests == 4
    assert await truth(lane) == first.commit


async def test_changes_come_through_the_agent_as_the_one_exec_path_makes_them(
    lane: Counting, lane_repo: Path
) -> None:
    await lane.snapshot()
    steps = [
        "printf 'def add(a, b):\\n    return a + b\\n' > app.py",  # a tracked file changed
        "echo new > notes.txt",  # an untracked file
        "rm README.md",  # a deletion
        "mkdir -p build && echo x > build/out",  # ignored: no change
        "git add -A && git -c user.name=a -c user.email=a@a commit -qm work",  # a commit: HEAD moves
        "chmod +x notes.txt",  # a mode change
        # settings that would change how commits are written: snapshots keep their shape
        "git config commit.gpgSign true && git config i18n.commitEncoding ISO-8859-1 && echo e > enc.txt",
    ]
    seen = set()
    for step in steps:
        assert (await lane.exec(step)).ok
        before = lane.execs
        snap = await lane.snapshot()
        assert lane.execs == before  # through the agent
        assert snap.commit == await truth(lane)
        seen.add(snap.commit)
    names = git(lane_repo, "ls-tree", "-r", "--name-only", lane.spec.snapshot_ref).split()
    assert names == [".gitignore", "app.py", "enc.txt", "notes.txt"]
    assert "a + b" in git(lane_repo, "show", f"{lane.spec.snapshot_ref}:app.py")
    mode = git(lane_repo, "ls-tree", lane.spec.snapshot_ref, "notes.txt").split()[0]
    assert mode == "100755"
    assert len(seen) == 6  # the ignored file changed nothing
    assert lane.snapshot_execs == 0


async def test_a_killed_agent_falls_back_to_one_exec_then_starts_again(
    lane: Counting, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(agent_module, "RETRY_FIRST", 3600.0)
    await lane.snapshot()
    assert (await lane.exec(KILL_AGENT)).ok
    assert (await lane.exec("echo changed > app.py")).ok
    snap = await lane.snapshot()  # the agent is gone: one exec instead
    assert snap.changed and lane.snapshot_execs == 1
    assert lane.agent.broken is not None and "stopped" in (lane.agent_note or "")
    assert (await lane.snapshot()).commit == snap.commit  # still waiting to retry: one exec again
    assert lane.snapshot_execs == 2 and lane.agent.starts == 1
    lane.agent._retry_at = 0.0  # the pause is over
    assert (await lane.exec("echo again > app.py")).ok
    again = await lane.snapshot()
    assert again.changed and lane.agent.starts == 2 and lane.snapshot_execs == 2
    assert again.commit == await truth(lane)


async def test_a_restarted_container_gets_a_new_agent(lane: Counting, docker_engine: Engine) -> None:
    first = await lane.snapshot()
    async with lane._engine("stopping"):
        await lane.docker().containers.container(lane.name).stop(t=1)
    note = await lane.recover()
    assert note is not None and "started again" in note
    assert (await lane.exec("echo after > after.txt")).ok
    snap = await lane.snapshot()
    assert snap.commit != first.commit and lane.snapshot_execs == 0 and lane.agent.starts == 2
    assert snap.commit == await truth(lane)
