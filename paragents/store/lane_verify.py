"""The last verify result of each lane (``lanes.verify``): the command, the commit and tree it ran
on, its exit code and the tail of its output. A merge needs a passing result on the exact tree
being merged."""

from __future__ import annotations

from dataclasses import dataclass

from paragents.store.base import StoreBase, now

OUTPUT_TAIL = 4000
"""Characters of a verify command's output that are kept (its end)."""


@dataclass(frozen=True)
class VerifyRecord:
    """One verify run of a lane: ``passed`` when ``exit_code`` is 0."""

    lane_id: int
    command: str
    commit: str
    tree: str
    exit_code: int
    output_tail: str
    finished_at: float

    @property
    def passed(self) -> bool:
        return self.exit_code == 0

    def covers(self, tree: str) -> bool:
        """True when this run was on exactly the tree ``tree`` (the lane's files, uncommitted ones
        included: committing them afterwards keeps the tree, so the result still holds)."""
        return bool(tree) and self.tree == tree


class LaneVerifyMixin(StoreBase):
    """Verify-result methods of :class:`paragents.store.Store`."""

    async def record_verify(
        self, lane_id: int, *, command: str, commit: str, tree: str, exit_code: int, output: str
    ) -> VerifyRecord:
        """Keep this run as the lane's last verify result (replacing the previous one); return it."""
        record = VerifyRecord(lane_id, command, commit, tree, exit_code, output[-OUTPUT_TAIL:], now())
        await self._write_one(
            "INSERT OR REPLACE INTO lane_verify (lane_id, command, commit_id, tree, exit_code, "
            "output_tail, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (lane_id, command, commit, tree, exit_code, record.output_tail, record.finished_at),
        )
        return record

    async def last_verify(self, lane_id: int) -> VerifyRecord | None:
        """Return the lane's last verify result, or None when it never ran."""
        row = await self._fetchone(
            "SELECT lane_id, command, commit_id, tree, exit_code, output_tail, finished_at "
            "FROM lane_verify WHERE lane_id = ?",
            (lane_id,),
        )
        if row is None:
            return None
        v = tuple(row)
        return VerifyRecord(int(v[0]), v[1], v[2], v[3], int(v[4]), v[5], float(v[6]))
