"""What a lane merge did (:class:`MergeResult`): shared by ``merge.py`` and ``pull_request.py`` so
neither imports the other."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class MergeResult:
    lane: str
    strategy: str
    target: str
    commit: str | None
    """The target's new tip (None for ``pr`` or when there was nothing to merge)."""
    summary: str
    commands: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {
            "lane": self.lane,
            "strategy": self.strategy,
            "target": self.target,
            "commit": self.commit,
            "summary": self.summary,
            "commands": self.commands,
        }
