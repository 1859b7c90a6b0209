"""The ``agent_sessions`` table: which external ACP agent a session runs, and the agent's own
session id (for ``session/load`` after a restart)."""

from __future__ import annotations

import aiosqlite

from paragents.store.base import Repository, now


class AgentSessionsRepo(Repository):
    """External agents of sessions, of :class:`paragents.store.Store` (``store.agent_sessions``)."""

    async def set(self, session_id: str, agent: str, remote_id: str | None = None) -> None:
        """Record that ``session_id`` runs agent ``agent`` (and its session id ``remote_id`` when known)."""
        await self._db.write_one(
            "INSERT INTO agent_sessions (session_id, agent, remote_id, created_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (session_id) DO UPDATE SET agent = excluded.agent, "
            "remote_id = COALESCE(excluded.remote_id, agent_sessions.remote_id)",
            (session_id, agent, remote_id, now()),
        )

    async def get(self, session_id: str) -> tuple[str, str | None] | None:
        """Return ``(agent, remote_id)`` of a session that runs an external agent, else None."""
        row = await self._db.fetchone(
            "SELECT agent, remote_id FROM agent_sessions WHERE session_id = ?", (session_id,)
        )
        return None if row is None else (str(row["agent"]), row["remote_id"])

    async def set_reported_cost(self, session_id: str, amount: float | None) -> None:
        """Remember the cumulative cost the session's agent last reported for its own session (None:
        a new agent session, nothing reported yet)."""
        await self._db.write_one(
            "UPDATE agent_sessions SET reported_cost = ? WHERE session_id = ?", (amount, session_id)
        )

    async def get_reported_cost(self, session_id: str) -> float | None:
        """Return the cumulative cost the session's agent last reported, None when it reported none."""
        row = await self._db.fetchone(
            "SELECT reported_cost FROM agent_sessions WHERE session_id = ?", (session_id,)
        )
        return None if row is None or row["reported_cost"] is None else float(row["reported_cost"])

    async def add_cost(
        self, session_id: str, turn_id: int | None, model: str, cost_usd: float, amount: float
    ) -> None:
        """Record ``cost_usd`` the session's agent spent (a usage row without tokens, so the budgets,
        the title and the overview count it like priced usage) and remember ``amount``, the
        cumulative cost it reported, in one transaction."""

        async def work(db: aiosqlite.Connection) -> None:
            await db.execute(
                "INSERT INTO usage (session_id, turn_id, model, prompt_tokens, completion_tokens,"
                " total_tokens, estimated, created_at, cached_tokens, cost_usd)"
                " VALUES (?, ?, ?, 0, 0, 0, 0, ?, 0, ?)",
                (session_id, turn_id, model, now(), cost_usd),
            )
            await db.execute(
                "UPDATE agent_sessions SET reported_cost = ? WHERE session_id = ?", (amount, session_id)
            )

        await self._db.write(work)
