"""The ``agent_sessions`` table: which external ACP agent a session runs, and the agent's own
session id (for ``session/load`` after a restart)."""

from __future__ import annotations

from paragents.store.base import StoreBase, now


class AgentSessionsMixin(StoreBase):
    """External agent methods of :class:`paragents.store.Store`."""

    async def set_agent_session(self, session_id: str, agent: str, remote_id: str | None = None) -> None:
        """Record that ``session_id`` runs agent ``agent`` (and its session id ``remote_id`` when known)."""
        await self._write_one(
            "INSERT INTO agent_sessions (session_id, agent, remote_id, created_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (session_id) DO UPDATE SET agent = excluded.agent, "
            "remote_id = COALESCE(excluded.remote_id, agent_sessions.remote_id)",
            (session_id, agent, remote_id, now()),
        )

    async def get_agent_session(self, session_id: str) -> tuple[str, str | None] | None:
        """Return ``(agent, remote_id)`` of a session that runs an external agent, else None."""
        row = await self._fetchone(
            "SELECT agent, remote_id FROM agent_sessions WHERE session_id = ?", (session_id,)
        )
        return None if row is None else (str(row["agent"]), row["remote_id"])
