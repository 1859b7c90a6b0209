"""The HTTP API's side tables (``paragents serve``): ``api_access``, one row per request (who, what,
the status), and ``pairing_codes``, the one-time pairing links (only a hash of each code is kept)."""

from __future__ import annotations

from typing import Any

from paragents.store.base import Repository, now


class ApiAccessRepo(Repository):
    """The HTTP API's access log and pairing codes, of :class:`paragents.store.Store`
    (``store.api_access``)."""

    async def record(
        self,
        *,
        remote: str,
        method: str,
        path: str,
        status: int,
        principal: str = "",
        note: str = "",
        at: float | None = None,
    ) -> None:
        """Record one HTTP request: the peer address, method, path (no query string: it may hold a
        secret), response status, who it was (``principal``: "key", "jwt:SUB", "browser:ID", "" when
        unauthenticated) and a short ``note`` (why it was refused)."""
        await self._db.write_one(
            "INSERT INTO api_access (at, remote, method, path, status, principal, note)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (now() if at is None else at, remote, method, path[:500], int(status), principal, note[:500]),
        )

    async def recent(self, limit: int = 100) -> list[dict[str, Any]]:
        """Return the last ``limit`` API requests, newest first, as dicts (id, at, remote, method, path,
        status, principal, note)."""
        return await self._db.fetchdicts("SELECT * FROM api_access ORDER BY id DESC LIMIT ?", (int(limit),))

    async def prune(self, before: float) -> int:
        """Delete the access rows and pairing codes older than ``before`` (Unix seconds); return how
        many access rows went."""
        await self._db.write_one("DELETE FROM pairing_codes WHERE expires_at < ?", (before,))
        changed, _ = await self._db.write_one("DELETE FROM api_access WHERE at < ?", (before,))
        return changed

    async def add_pairing_code(self, code_hash: str, *, created_at: float, expires_at: float) -> None:
        """Store a new one-time pairing code by its hash, valid until ``expires_at`` (Unix seconds)."""
        await self._db.write_one(
            "INSERT INTO pairing_codes (code_hash, created_at, expires_at) VALUES (?, ?, ?)",
            (code_hash, created_at, expires_at),
        )

    async def use_pairing_code(self, code_hash: str, *, at: float) -> str:
        """Mark the pairing code used at ``at`` if it is unused and unexpired; return "ok", or why not:
        "unknown", "used" or "expired". Exactly one caller gets "ok" for a code (one UPDATE)."""
        changed, _ = await self._db.write_one(
            "UPDATE pairing_codes SET used_at = ? WHERE code_hash = ? AND used_at IS NULL AND expires_at > ?",
            (at, code_hash, at),
        )
        if changed == 1:
            return "ok"
        row = await self._db.fetchone("SELECT used_at FROM pairing_codes WHERE code_hash = ?", (code_hash,))
        if row is None:
            return "unknown"
        return "used" if row[0] is not None else "expired"
