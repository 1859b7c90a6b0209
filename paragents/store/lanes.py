"""Lane records (a git worktree per session) and their port blocks.

A lane row is written *before* its worktree exists (``setup_state = 'creating'``): the insert claims
the name and a block of ports in one ``BEGIN IMMEDIATE`` transaction, so two paragents processes
creating lanes at once never get the same name or the same ports (``port_base`` is also UNIQUE).
"""

from __future__ import annotations

import json
import sqlite3

import aiosqlite

from paragents.store.base import Repository, fetchall, fetchone, now
from paragents.store.records.errors import StoreError
from paragents.store.records.lanes import LaneRecord
from paragents.store.rows import Json, from_row

PORT_START = 41000
"""The first port handed to a lane; blocks are ``[PORT_START + k * PORT_BLOCK, ... + PORT_BLOCK)``."""

PORT_BLOCK = 10
"""Ports per lane (exported as PARAGENTS_PORT .. PARAGENTS_PORT + 9)."""

PORT_LIMIT = 65000
"""No block starts at or above this port."""


_COLUMNS = (
    "id, repo, name, path, branch, base_ref, base_commit, port_base, port_count, setup_state, "
    "setup_output, session_id, created_at, lockfiles, landed_tree, backend"
)


def _lane(row: sqlite3.Row | None) -> LaneRecord | None:
    if row is None:
        return None
    return from_row(LaneRecord, row, lockfiles=Json(default={}), backend=row["backend"] or "local")


class LanesRepo(Repository):
    """Lanes and their port blocks, of :class:`paragents.store.Store` (``store.lanes``)."""

    async def reserve(
        self,
        *,
        repo: str,
        name: str,
        path: str,
        branch: str,
        base_ref: str,
        base_commit: str,
        backend: str = "local",
    ) -> LaneRecord:
        """Claim a lane name and the lowest free block of ports in one transaction; return the row
        (``setup_state = 'creating'``). Raises StoreError when the name is taken in this repository
        or no port block is left."""

        async def work(db: aiosqlite.Connection) -> int:
            taken = await fetchone(db, "SELECT 1 FROM lanes WHERE repo = ? AND name = ?", (repo, name))
            if taken is not None:
                raise StoreError(f"a lane named {name!r} already exists in {repo}")
            used = {int(r[0]) for r in await fetchall(db, "SELECT port_base FROM lanes")}
            port = PORT_START
            while port in used:
                port += PORT_BLOCK
            if port + PORT_BLOCK > PORT_LIMIT:
                raise StoreError(
                    "no free block of lane ports is left; remove lanes with `paragents lanes gc`"
                )
            cur = await db.execute(
                "INSERT INTO lanes (repo, name, path, branch, base_ref, base_commit, port_base, "
                "port_count, created_at, backend) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (repo, name, path, branch, base_ref, base_commit, port, PORT_BLOCK, now(), backend),
            )
            return int(cur.lastrowid or 0)

        lane_id = await self._db.write(work)
        lane = await self.get_by_id(lane_id)
        assert lane is not None
        return lane

    async def get_by_id(self, lane_id: int) -> LaneRecord | None:
        return _lane(await self._db.fetchone(f"SELECT {_COLUMNS} FROM lanes WHERE id = ?", (lane_id,)))

    async def get(self, repo: str, name: str) -> LaneRecord | None:
        """Return the lane ``name`` of repository ``repo`` (its top-level path), or None."""
        return _lane(
            await self._db.fetchone(f"SELECT {_COLUMNS} FROM lanes WHERE repo = ? AND name = ?", (repo, name))
        )

    async def of_session(self, session_id: str) -> LaneRecord | None:
        """Return the lane a session works in, or None."""
        return _lane(
            await self._db.fetchone(f"SELECT {_COLUMNS} FROM lanes WHERE session_id = ?", (session_id,))
        )

    async def all(self, repo: str | None = None) -> list[LaneRecord]:
        """Return the lanes of ``repo`` (every repository when None), oldest first."""
        if repo is None:
            rows = await self._db.fetchall(f"SELECT {_COLUMNS} FROM lanes ORDER BY id")
        else:
            rows = await self._db.fetchall(
                f"SELECT {_COLUMNS} FROM lanes WHERE repo = ? ORDER BY id", (repo,)
            )
        return [lane for lane in map(_lane, rows) if lane is not None]

    async def update(
        self,
        lane_id: int,
        *,
        setup_state: str | None = None,
        setup_output: str | None = None,
        lockfiles: dict[str, str] | None = None,
        session_id: str | None = None,
        base_commit: str | None = None,
        landed_tree: str | None = None,
    ) -> None:
        """Change the given fields of a lane row (None leaves a field as it is)."""
        sets: list[str] = []
        params: list[object] = []
        for column, value in (
            ("setup_state", setup_state),
            ("setup_output", setup_output),
            ("lockfiles", json.dumps(lockfiles) if lockfiles is not None else None),
            ("session_id", session_id),
            ("base_commit", base_commit),
            ("landed_tree", landed_tree),
        ):
            if value is not None:
                sets.append(f"{column} = ?")
                params.append(value)
        if sets:
            await self._db.write_one(f"UPDATE lanes SET {', '.join(sets)} WHERE id = ?", (*params, lane_id))

    async def delete(self, lane_id: int) -> None:
        """Forget a lane row (its port block and its ``port:N`` reservations become free)."""

        async def work(db: aiosqlite.Connection) -> None:
            row = await fetchone(db, "SELECT port_base, port_count FROM lanes WHERE id = ?", (lane_id,))
            if row is not None:
                await db.execute(
                    f"DELETE FROM reservations WHERE kind = 'port' AND path IN ({_marks(int(row[1]))})",
                    _port_paths(int(row[0]), int(row[1])),
                )
            await db.execute("DELETE FROM lanes WHERE id = ?", (lane_id,))

        await self._db.write(work)

    async def hold_ports(self, lane: LaneRecord, session_id: str) -> None:
        """Record the lane's block of ports as ``port:N`` reservations (kind "port", no turn, no
        process: they last as long as the lane) held by ``session_id``, replacing earlier ones, in
        one transaction. The conflict checker then names the holder when another session's command
        binds one of them."""
        paths = _port_paths(lane.port_base, lane.port_count)
        reason = f"lane {lane.name}'s ports {lane.port_base}-{lane.port_base + lane.port_count - 1}"

        async def work(db: aiosqlite.Connection) -> None:
            await db.execute(
                f"DELETE FROM reservations WHERE kind = 'port' AND path IN ({_marks(len(paths))})", paths
            )
            stamp = now()
            await db.executemany(
                "INSERT INTO reservations (session_id, turn_id, path, kind, reason, pid, created_at) "
                "VALUES (?, NULL, ?, 'port', ?, NULL, ?)",
                [(session_id, path, reason, stamp) for path in paths],
            )

        await self._db.write(work)


def _port_paths(base: int, count: int) -> tuple[str, ...]:
    return tuple(f"port:{n}" for n in range(base, base + count))


def _marks(count: int) -> str:
    return ", ".join("?" * count)
