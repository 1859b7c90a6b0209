"""The remote lanes' part of a prediction round: :class:`RoundSyncer` brings the files of the lanes
that may have changed here, a bounded number at a time, and says which trees the prediction may take
without reading a worktree (docs/remote.md "Prediction rounds").

- **A bounded pool.** At most ``concurrency`` lanes sync at once (:data:`ROUND_CONCURRENCY`): eight
  fetches at once on a small machine mostly wait for each other's git processes.
- **A round never waits long for one lane.** A lane that has not answered after ``wait`` seconds
  (:data:`ROUND_WAIT`) keeps syncing in the background and the round goes on with the files it
  fetched last; until that sync ends the lane is left out of the next rounds (a slow or hostile lane
  cannot hold the others' predictions back).
- **The trees.** For each lane synced, the tree of its snapshot: the files its worktree here holds
  now (:class:`~paragents.backends.mirror.SyncResult`), so the prediction takes it as it is instead
  of hashing the worktree again."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from paragents.backends.base import BackendError
from paragents.backends.lane import RemoteLane
from paragents.backends.mirror import SyncResult
from paragents.lanes.errors import LaneError

ROUND_CONCURRENCY = 4
"""Remote lanes a round syncs at once."""
ROUND_WAIT = 10.0
"""Seconds a round waits for one lane's sync before going on without it."""
FAILURES = (BackendError, LaneError, OSError)
"""What a lane's sync may fail with (the lane's place, or git here): reported, the round goes on."""


@dataclass
class RoundSync:
    """What the remote part of a round did: ``trees`` (lane name -> the tree of its files here now,
    for each lane synced), ``changed`` (the lanes whose files here or there changed), ``late`` (still
    syncing in the background) and ``failed`` (lane name -> the error)."""

    trees: dict[str, str] = field(default_factory=dict)
    changed: set[str] = field(default_factory=set)
    late: list[str] = field(default_factory=list)
    failed: dict[str, Exception] = field(default_factory=dict)


class RoundSyncer:
    """Runs the remote part of rounds for the lanes of one process (see the module docstring)."""

    def __init__(self, *, concurrency: int | None = None, wait: float = ROUND_WAIT) -> None:
        self.concurrency = max(1, concurrency or ROUND_CONCURRENCY)
        self.wait = wait
        self._running: dict[int, asyncio.Task[SyncResult]] = {}
        """id(lane) -> its sync still running after an earlier round went on."""
        self._late_errors: dict[str, Exception] = {}

    async def sync(self, lanes: Sequence[RemoteLane]) -> RoundSync:
        """Sync ``lanes`` (fast, as rounds do) and say what happened (see :class:`RoundSync`)."""
        done = RoundSync(failed=dict(self._late_errors))
        self._late_errors.clear()
        todo = [lane for lane in lanes if id(lane) not in self._running]
        done.late = [lane.name for lane in lanes if id(lane) in self._running]
        if not todo:
            return done
        pool = asyncio.Semaphore(self.concurrency)

        async def one(lane: RemoteLane) -> SyncResult:
            async with pool:
                return await lane.sync(fast=True)

        tasks = {asyncio.ensure_future(one(lane)): lane for lane in todo}
        finished, pending = await asyncio.wait(tasks, timeout=self.wait)
        for task in pending:
            lane = tasks[task]
            done.late.append(lane.name)
            self._running[id(lane)] = task
            task.add_done_callback(lambda t, lane=lane: self._ended(lane, t))  # type: ignore[misc]
        for task in finished:
            lane = tasks[task]
            if task.cancelled():
                continue
            exc = task.exception()
            if isinstance(exc, FAILURES):
                done.failed[lane.name] = exc
                continue
            if exc is not None:
                raise exc
            result = task.result()
            done.trees[lane.name] = result.snapshot.tree
            if result.pulled or result.pushed:
                done.changed.add(lane.name)
        return done

    def _ended(self, lane: RemoteLane, task: asyncio.Task[SyncResult]) -> None:
        self._running.pop(id(lane), None)
        if task.cancelled():
            return
        exc = task.exception()
        if isinstance(exc, FAILURES):
            self._late_errors[lane.name] = exc

    async def close(self) -> None:
        """Cancel the syncs still running (the process ends)."""
        for task in list(self._running.values()):
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        self._running.clear()
