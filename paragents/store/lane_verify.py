"""The last verify result of each lane (``lanes.verify``): the command, the commit and tree it ran
on, its exit code and the tail of its output. A merge needs a passing result on the exact tree
being merged."""

from __future__ import annotations

from paragents.store.base import Repository, now
from paragents.store.records.lanes import VerifyRecord
from paragents.store.rows import from_row

OUTPUT_TAIL = 4000
"""Characters of a verify command's output that are kept (its end)."""


class LaneVerifyRepo(Repository):
    """The lanes' last verify results, of :class:`paragents.store.Store` (``store.lane_verify``)."""

    async def record(
        self, lane_id: int, *, command: str, commit: str, tree: str, exit_code: int, output: str
    ) -> VerifyRecord:
        """Keep this run as the lane's last verify result (replacing the previous one); return it."""
        record = VerifyRecord(lane_id, command, commit, tree, exit_code, output[-OUTPUT_TAIL:], now())
        await self._db.write_one(
            "INSERT OR REPLACE INTO lane_verify (lane_id, command, commit_id, tree, exit_code, "
            "output_tail, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (lane_id, command, commit, tree, exit_code, record.output_tail, record.finished_at),
        )
        return record

    async def last(self, lane_id: int) -> VerifyRecord | None:
        """Return the lane's last verify result, or None when it never ran."""
        row = await self._db.fetchone("SELECT * FROM lane_verify WHERE lane_id = ?", (lane_id,))
        return None if row is None else from_row(VerifyRecord, row, commit=row["commit_id"])
