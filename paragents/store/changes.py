"""Whether another connection changed the database, cheaply: ``PRAGMA data_version`` (one read of a
counter SQLite keeps per connection; https://sqlite.org/pragma.html#pragma_data_version). It moves
when another connection (another process, or another Store object) commits, never for this
connection's own writes, so a process that only reads (a session shown read-only, following its
holder) re-reads its rows only after it moved."""

from __future__ import annotations

from paragents.store.base import Repository


class ChangesRepo(Repository):
    """Change checks of :class:`paragents.store.Store` (``store.changes``)."""

    async def data_version(self) -> int:
        """Return SQLite's ``data_version`` of this store's connection: it differs from an earlier
        value once another connection committed a change (this connection's own writes never move it)."""
        row = await self._db.fetchone("PRAGMA data_version")
        return int(row[0]) if row else 0

    @property
    def total_changes(self) -> int:
        """Rows inserted, updated or deleted through this store's connection since it opened (a
        reader that only follows other processes' writes leaves it unchanged)."""
        return self._db.total_changes
