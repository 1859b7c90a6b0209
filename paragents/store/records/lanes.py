"""Records of the lanes (a git worktree per session, :mod:`paragents.store.lanes`) and of their
last verify run (:mod:`paragents.store.lane_verify`)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class LaneRecord:
    """One lane as stored: its worktree, branch, base, ports and setup state."""

    id: int
    repo: str
    name: str
    path: str
    branch: str
    base_ref: str
    base_commit: str
    port_base: int
    port_count: int
    setup_state: str
    setup_output: str
    session_id: str | None
    created_at: float
    lockfiles: dict[str, str] = field(default_factory=dict)
    landed_tree: str | None = None
    """The tree of the lane's work when it last landed on its target (None: it has not)."""
    backend: str = "local"
    """Where the lane runs: ``local`` (its worktree), ``container`` or ``kubernetes`` (docs/remote.md:
    the worktree then mirrors the files of its container or Pod)."""

    @property
    def remote(self) -> bool:
        return self.backend != "local"

    @property
    def ports(self) -> range:
        return range(self.port_base, self.port_base + self.port_count)


@dataclass(frozen=True)
class VerifyRecord:
    """One verify run of a lane: ``passed`` when ``exit_code`` is 0."""

    lane_id: int
    command: str
    commit: str
    tree: str
    exit_code: int
    output_tail: str
    finished_at: float

    @property
    def passed(self) -> bool:
        return self.exit_code == 0

    def covers(self, tree: str) -> bool:
        """True when this run was on exactly the tree ``tree`` (the lane's files, uncommitted ones
        included: committing them afterwards keeps the tree, so the result still holds)."""
        return bool(tree) and self.tree == tree
