"""Records of the fan-out groups and their candidates (:mod:`paragents.store.fanout`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class CandidateRecord:
    """One candidate of a fan-out group as stored."""

    group_id: str
    idx: int
    session_id: str | None
    session_name: str
    model: str
    lane: str | None
    lane_path: str | None
    branch: str | None
    state: str
    verify: dict[str, Any] | None
    evidence: dict[str, Any]
    patch: str | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "idx": self.idx,
            "session_id": self.session_id,
            "session": self.session_name,
            "model": self.model,
            "lane": self.lane,
            "lane_path": self.lane_path,
            "branch": self.branch,
            "state": self.state,
            "verify": self.verify,
            "evidence": self.evidence,
            "patch": self.patch,
        }


@dataclass(frozen=True)
class GroupRecord:
    """One fan-out group as stored, with its candidates (by index)."""

    id: str
    kind: str
    project_dir: str
    name: str
    prompt: str
    base_ref: str | None
    base_commit: str | None
    verify: str | None
    settings: dict[str, Any]
    state: str
    judge: list[Any]
    choice: dict[str, Any] | None
    created_at: float
    finished_at: float | None
    candidates: tuple[CandidateRecord, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "project_dir": self.project_dir,
            "name": self.name,
            "prompt": self.prompt,
            "base_ref": self.base_ref,
            "base_commit": self.base_commit,
            "verify": self.verify,
            "settings": self.settings,
            "state": self.state,
            "judge": self.judge,
            "choice": self.choice,
            "created_at": self.created_at,
            "finished_at": self.finished_at,
            "candidates": [c.as_dict() for c in self.candidates],
        }
