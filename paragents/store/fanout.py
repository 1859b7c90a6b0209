"""Fan-out groups and their candidates: the evidence a fan-out leaves (docs/fanout.md).

A group row holds what was asked (kind, prompt, base commit, verify command, settings such as the
models and the group's allow rules), the judge's answers and the user's choice; a candidate row holds
one sibling session, its lane, its verify result, its measured evidence and its patch. A session's
group is also kept on the session row (``sessions.group_id``)."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from paragents.models import Usage
from paragents.store.base import Repository, now
from paragents.store.records.fanout import CandidateRecord, GroupRecord
from paragents.store.rows import Json, from_row

GROUP_KINDS = ("best_of", "split", "review")


def _candidate(row: sqlite3.Row) -> CandidateRecord:
    return from_row(CandidateRecord, row, verify=Json(), evidence=Json(default={}))


def _group(row: sqlite3.Row, candidates: tuple[CandidateRecord, ...]) -> GroupRecord:
    return from_row(
        GroupRecord,
        row,
        settings=Json(default={}),
        judge=Json(default=[]),
        choice=Json(),
        candidates=candidates,
    )


class FanoutRepo(Repository):
    """Fan-out groups and candidates, of :class:`paragents.store.Store` (``store.fanout``)."""

    async def create_group(
        self,
        *,
        group_id: str,
        kind: str,
        project_dir: str,
        name: str,
        prompt: str,
        base_ref: str | None,
        base_commit: str | None,
        verify: str | None,
        settings: dict[str, Any],
    ) -> GroupRecord:
        """Insert a new group (state ``running``) and return it."""
        await self._db.write_one(
            "INSERT INTO fanout_groups (id, kind, project_dir, name, prompt, base_ref, base_commit, verify, "
            "settings, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                group_id,
                kind,
                project_dir,
                name,
                prompt,
                base_ref,
                base_commit,
                verify,
                json.dumps(settings),
                now(),
            ),
        )
        group = await self.get_group(group_id)
        assert group is not None
        return group

    async def add_candidate(
        self,
        group_id: str,
        idx: int,
        *,
        session_id: str | None,
        session_name: str,
        model: str,
        lane: str | None,
        lane_path: str | None,
        branch: str | None,
    ) -> None:
        """Record candidate ``idx`` of a group and put its session (if any) in the group."""

        async def work(db: Any) -> None:
            await db.execute(
                "INSERT INTO fanout_candidates (group_id, idx, session_id, session_name, model, lane, "
                "lane_path, branch) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (group_id, idx, session_id, session_name, model, lane, lane_path, branch),
            )
            if session_id is not None:
                await db.execute("UPDATE sessions SET group_id = ? WHERE id = ?", (group_id, session_id))

        await self._db.write(work)

    async def update_candidate(
        self,
        group_id: str,
        idx: int,
        *,
        state: str | None = None,
        verify: dict[str, Any] | None = None,
        evidence: dict[str, Any] | None = None,
        patch: str | None = None,
    ) -> None:
        """Change the given fields of a candidate (None leaves a field as it is)."""
        sets: list[str] = []
        params: list[object] = []
        for column, value in (
            ("state", state),
            ("verify", json.dumps(verify) if verify is not None else None),
            ("evidence", json.dumps(evidence) if evidence is not None else None),
            ("patch", patch),
        ):
            if value is not None:
                sets.append(f"{column} = ?")
                params.append(value)
        if sets:
            await self._db.write_one(
                f"UPDATE fanout_candidates SET {', '.join(sets)} WHERE group_id = ? AND idx = ?",
                (*params, group_id, idx),
            )

    async def update_group(
        self,
        group_id: str,
        *,
        state: str | None = None,
        settings: dict[str, Any] | None = None,
        choice: dict[str, Any] | None = None,
        finished: bool = False,
    ) -> None:
        """Change the given fields of a group; ``finished`` stamps ``finished_at``."""
        sets: list[str] = []
        params: list[object] = []
        for column, value in (
            ("state", state),
            ("settings", json.dumps(settings) if settings is not None else None),
            ("choice", json.dumps(choice) if choice is not None else None),
        ):
            if value is not None:
                sets.append(f"{column} = ?")
                params.append(value)
        if finished:
            sets.append("finished_at = ?")
            params.append(now())
        if sets:
            await self._db.write_one(
                f"UPDATE fanout_groups SET {', '.join(sets)} WHERE id = ?", (*params, group_id)
            )

    async def add_judge_answer(self, group_id: str, answer: dict[str, Any]) -> None:
        """Append one judge attempt (raw text, parsed ranking or the error) to the group's evidence."""
        await self._db.write_one(
            "UPDATE fanout_groups SET judge = json_insert(judge, '$[#]', json(?)) WHERE id = ?",
            (json.dumps(answer), group_id),
        )

    async def get_group(self, group_id: str) -> GroupRecord | None:
        """Return the group ``group_id`` (an unambiguous prefix also works) with its candidates, or None."""
        rows = await self._db.fetchall(
            "SELECT * FROM fanout_groups WHERE substr(id, 1, length(?)) = ? ORDER BY id = ? DESC LIMIT 2",
            (group_id, group_id, group_id),
        )
        if not rows or (len(rows) > 1 and rows[0]["id"] != group_id):
            return None
        row = rows[0]
        cands = await self._db.fetchall(
            "SELECT * FROM fanout_candidates WHERE group_id = ? ORDER BY idx", (row["id"],)
        )
        return _group(row, tuple(_candidate(c) for c in cands))

    async def list_groups(self, project_dir: str | None = None) -> list[GroupRecord]:
        """Return the groups (of ``project_dir`` when given), newest first, with their candidates."""
        if project_dir is None:
            rows = await self._db.fetchall("SELECT id FROM fanout_groups ORDER BY created_at DESC")
        else:
            rows = await self._db.fetchall(
                "SELECT id FROM fanout_groups WHERE project_dir = ? ORDER BY created_at DESC", (project_dir,)
            )
        groups = [await self.get_group(r["id"]) for r in rows]
        return [g for g in groups if g is not None]

    async def session_group(self, session_id: str) -> str | None:
        """Return the fan-out group a session belongs to, or None."""
        row = await self._db.fetchone("SELECT group_id FROM sessions WHERE id = ?", (session_id,))
        return str(row[0]) if row is not None and row[0] is not None else None

    async def group_usage_by_model(self, group_id: str) -> dict[str, Usage]:
        """Return the usage recorded per model by every session of a fan-out group (group budgets)."""
        rows = await self._db.fetchdicts(
            "SELECT u.model AS model, SUM(u.prompt_tokens) AS p, SUM(u.completion_tokens) AS c,"
            " SUM(u.total_tokens) AS t FROM usage u JOIN sessions s ON s.id = u.session_id"
            " WHERE s.group_id = ? GROUP BY u.model",
            (group_id,),
        )
        return {str(r["model"]): Usage(int(r["p"]), int(r["c"]), int(r["t"])) for r in rows}
