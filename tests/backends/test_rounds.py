"""The remote part of a prediction round (paragents/backends/rounds.py): a bounded number of lanes
sync at once, a lane that takes long is left behind (and out of the next rounds until it ends), a
failing lane is reported while the others go on."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, cast

from paragents.backends.base import BackendError, Snapshot
from paragents.backends.lane import RemoteLane
from paragents.backends.mirror import SyncResult
from paragents.backends.rounds import RoundSyncer


class Lane:
    """A remote lane's stand-in: its sync waits for ``gate`` (when given), then fails or answers."""

    def __init__(self, name: str, board: Board, *, gate: asyncio.Event | None = None, fail: str = "") -> None:
        self.name = name
        self.board = board
        self.gate = gate
        self.fail = fail
        self.calls = 0

    async def sync(self, *, fast: bool = False) -> SyncResult:
        assert fast
        self.calls += 1
        self.board.enter()
        try:
            if self.gate is not None:
                await self.gate.wait()
            if self.fail:
                raise BackendError(self.fail)
            tree = self.name.encode().hex().ljust(40, "0")[:40]
            return SyncResult(Snapshot("c" * 40, "h" * 40, tree, "ref"), pulled=self.name.startswith("moved"))
        finally:
            self.board.active -= 1


class Board:
    """Counts the syncs running at once; ``full`` is set when ``limit`` run together."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.active = 0
        self.peak = 0
        self.full = asyncio.Event()

    def enter(self) -> None:
        self.active += 1
        self.peak = max(self.peak, self.active)
        if self.active >= self.limit:
            self.full.set()


def lanes(items: Sequence[Lane]) -> list[RemoteLane]:
    return cast(list[RemoteLane], list(items))


async def test_at_most_the_pool_size_sync_at_once() -> None:
    board = Board(3)
    gate = asyncio.Event()
    items = [Lane(f"moved{i}" if i % 2 else f"same{i}", board, gate=gate) for i in range(8)]
    syncer = RoundSyncer(concurrency=3, wait=60)
    round_ = asyncio.create_task(syncer.sync(lanes(items)))
    await board.full.wait()
    assert sum(lane.calls for lane in items) == 3  # the other five wait for a free place
    gate.set()
    done = await round_
    assert board.peak == 3 and all(lane.calls == 1 for lane in items)
    assert set(done.trees) == {lane.name for lane in items} and not done.late and not done.failed
    assert done.changed == {f"moved{i}" for i in range(1, 8, 2)}


async def test_a_slow_lane_is_left_behind_and_out_of_the_next_rounds_until_it_ends() -> None:
    board = Board(99)
    gate = asyncio.Event()
    slow = Lane("slow", board, gate=gate)
    quick = Lane("quick", board)
    syncer = RoundSyncer(concurrency=4, wait=0.05)
    first = await syncer.sync(lanes([slow, quick]))
    assert first.late == ["slow"] and set(first.trees) == {"quick"}
    second = await syncer.sync(lanes([slow, quick]))  # still syncing: not asked again
    assert second.late == ["slow"] and slow.calls == 1 and quick.calls == 2
    gate.set()
    running: Any = list(syncer._running.values())
    await asyncio.gather(*running)
    third = await syncer.sync(lanes([slow, quick]))
    assert slow.calls == 2 and set(third.trees) == {"slow", "quick"} and not third.late


async def test_a_failing_lane_is_reported_and_the_others_go_on() -> None:
    board = Board(99)
    gate = asyncio.Event()
    broken = Lane("broken", board, fail="the engine refused")
    late_failure = Lane("later", board, gate=gate, fail="it broke while the round went on")
    fine = Lane("fine", board)
    syncer = RoundSyncer(wait=0.05)
    done = await syncer.sync(lanes([broken, late_failure, fine]))
    assert set(done.trees) == {"fine"} and done.late == ["later"]
    assert str(done.failed["broken"]) == "the engine refused"
    gate.set()
    running: Any = list(syncer._running.values())
    await asyncio.gather(*running, return_exceptions=True)
    after = await syncer.sync(lanes([fine]))  # the late failure is told in the next round
    assert str(after.failed["later"]) == "it broke while the round went on"
    await syncer.close()
