"""Budget figures of the store: spend per model (tokens, stored costs), the running time of turns, and
the budgets set with ``/budget`` kept across restarts (``session_budgets``, ``project_budgets``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aiosqlite

from paragents.paths import norm_dir
from paragents.store.base import Repository, now


def _where(
    session_id: str | None,
    project_dir: str | Path | None,
    since: float | None,
    column: str,
    group_id: str | None = None,
) -> tuple[str, list[object]]:
    where: list[str] = ["1 = 1"]
    params: list[object] = []
    if group_id is not None:
        where.append("s.group_id = ?")
        params.append(group_id)
    if session_id is not None:
        where.append("x.session_id = ?")
        params.append(session_id)
    if project_dir is not None:
        where.append("s.project_dir = ?")
        params.append(norm_dir(Path(project_dir)))
    if since is not None:
        where.append(f"x.{column} >= ?")
        params.append(since)
    return " AND ".join(where), params


class BudgetsRepo(Repository):
    """Spend, running time and stored budgets, of :class:`paragents.store.Store` (``store.budgets``)."""

    async def spend_rows(
        self,
        *,
        session_id: str | None = None,
        project_dir: str | Path | None = None,
        since: float | None = None,
        group_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """Return per model the usage of one session and/or of every session of a project from
        ``since`` on (every process's rows): ``prompt``, ``cached``, ``completion`` tokens, ``cost``
        (USD, the sum of the costs stored per request) over ``priced_rows`` rows, the tokens of the
        ``unpriced_rows`` (no stored cost: ``unpriced_prompt/_cached/_completion``) and ``estimated``
        (1 when any row was counted locally). ``paragents.agent.spend.priced`` turns them into a Spend."""
        where, params = _where(session_id, project_dir, since, "created_at", group_id)
        return await self._db.fetchdicts(
            "SELECT x.model AS model, SUM(x.prompt_tokens) AS prompt, SUM(x.cached_tokens) AS cached,"
            " SUM(x.completion_tokens) AS completion, COALESCE(SUM(x.cost_usd), 0) AS cost,"
            " COUNT(x.cost_usd) AS priced_rows, SUM(x.cost_usd IS NULL) AS unpriced_rows,"
            " SUM(CASE WHEN x.cost_usd IS NULL THEN x.prompt_tokens ELSE 0 END) AS unpriced_prompt,"
            " SUM(CASE WHEN x.cost_usd IS NULL THEN x.cached_tokens ELSE 0 END) AS unpriced_cached,"
            " SUM(CASE WHEN x.cost_usd IS NULL THEN x.completion_tokens ELSE 0 END) AS unpriced_completion,"
            " MAX(x.estimated) AS estimated"
            " FROM usage x JOIN sessions s ON s.id = x.session_id"
            f" WHERE {where} GROUP BY x.model",
            tuple(params),
        )

    async def run_seconds(
        self,
        *,
        session_id: str | None = None,
        project_dir: str | Path | None = None,
        since: float | None = None,
        group_id: str | None = None,
    ) -> float:
        """Return the wall-clock seconds the finished turns of one session and/or of a project's
        sessions (started from ``since`` on) ran: the time the agent measured (pauses excluded), or,
        for turns finished without it, their start-to-finish time; interrupted turns (the process
        died) whose time was not measured count 0."""
        where, params = _where(session_id, project_dir, since, "started_at", group_id)
        row = await self._db.fetchone(
            "SELECT COALESCE(SUM(COALESCE(x.run_seconds, CASE WHEN x.status = 'interrupted' THEN 0"
            " ELSE x.finished_at - x.started_at END)), 0)"
            " FROM turns x JOIN sessions s ON s.id = x.session_id"
            f" WHERE x.finished_at IS NOT NULL AND {where}",
            tuple(params),
        )
        return float(row[0]) if row else 0.0

    async def get_session_budget(self, session_id: str) -> dict[str, Any] | None:
        """Return the budget stored for the session with ``/budget session`` (a Budget's fields), or None."""
        row = await self._db.fetchone(
            "SELECT budget_json FROM session_budgets WHERE session_id = ?", (session_id,)
        )
        return json.loads(row[0]) if row else None

    async def set_session_budget(self, session_id: str, budget: dict[str, Any] | None) -> None:
        """Store (None: forget) the session's own budget."""
        await self._put_budget("session_budgets", "session_id", session_id, budget)

    async def get_project_budget(self, project_dir: str | Path) -> dict[str, Any] | None:
        """Return the per-day budget stored for the project with ``/budget project``, or None."""
        row = await self._db.fetchone(
            "SELECT budget_json FROM project_budgets WHERE project_dir = ?", (norm_dir(Path(project_dir)),)
        )
        return json.loads(row[0]) if row else None

    async def set_project_budget(self, project_dir: str | Path, budget: dict[str, Any] | None) -> None:
        """Store (None: forget) the project's per-day budget."""
        await self._put_budget("project_budgets", "project_dir", norm_dir(Path(project_dir)), budget)

    async def _put_budget(self, table: str, key: str, value: str, budget: dict[str, Any] | None) -> None:
        async def work(db: aiosqlite.Connection) -> None:
            if budget is None:
                await db.execute(f"DELETE FROM {table} WHERE {key} = ?", (value,))
                return
            await db.execute(
                f"INSERT INTO {table} ({key}, budget_json, updated_at) VALUES (?, ?, ?)"
                f" ON CONFLICT({key}) DO UPDATE SET budget_json = excluded.budget_json,"
                " updated_at = excluded.updated_at",
                (value, json.dumps(budget), now()),
            )

        await self._db.write(work)
