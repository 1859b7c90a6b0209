"""The ``audit`` table: every permission decision, who settled it and how."""

from __future__ import annotations

from typing import Any

from paragents.store.base import Repository, now
from paragents.store.records.errors import StoreError
from paragents.store.rows import json_dicts, to_json

ANSWERED_BY = ("policy", "user", "headless")
"""Who settled a permission decision: a rule/mode (policy), the user in the TUI, or headless mode."""


class AuditRepo(Repository):
    """Permission decisions, of :class:`paragents.store.Store` (``store.audit``)."""

    async def record(
        self,
        session_id: str,
        *,
        tool: str,
        input: dict[str, Any],
        decision: str,
        reason: str | None,
        rule: str | None,
        scope: str | None,
        answered_by: str,
        answer: str | None = None,
        answerer: str | None = None,
    ) -> int:
        """Record one permission decision and return its id.

        ``tool`` is the Claude Code tool name (Bash, Read, Edit...), ``input`` the tool input dict,
        ``decision`` allow/ask/deny, ``rule`` the matching rule string, ``scope`` where the rule
        came from, ``answered_by`` policy|user|headless, ``answer`` the user's reply to an ask
        (allow_once...), ``answerer`` who gave it as its approval row says (``cli (pid 12, tty
        /dev/pts/3, ...)``, ``web:key (client ...)``, ``user``). Raises StoreError for a bad
        ``answered_by``, an input holding an auth header/key, or an unknown session."""
        if answered_by not in ANSWERED_BY:
            raise StoreError(f"answered_by: {answered_by!r} is not one of {', '.join(ANSWERED_BY)}")
        return await self._db.insert(
            "INSERT INTO audit (session_id, tool, input_json, decision, reason, rule, scope, answered_by,"
            " answer, answerer, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                session_id,
                tool,
                to_json(input, "input"),
                decision,
                reason,
                rule,
                scope,
                answered_by,
                answer,
                answerer,
                now(),
            ),
            session_id,
        )

    async def recent(self, session_id: str, limit: int = 20) -> list[dict[str, Any]]:
        """Return the session's last ``limit`` decisions, newest first, as dicts with keys id, tool,
        input (dict), decision, reason, rule, scope, answered_by, answer, answerer, created_at."""
        rows = await self._db.fetchdicts(
            "SELECT * FROM audit WHERE session_id = ? ORDER BY id DESC LIMIT ?", (session_id, int(limit))
        )
        return json_dicts(rows, input="input_json")
