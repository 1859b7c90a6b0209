"""Lanes: a git worktree per session, with setup, ports, cross-lane conflict prediction, merges and
a cleanup that cannot lose work (docs/lanes.md). Core code: never imports textual."""

from paragents.lanes.create import CreatedLane, create_lane, lane_env, unique_lane_name
from paragents.lanes.errors import LaneError
from paragents.lanes.git import MIN_VERSION, git, require_git
from paragents.lanes.repo import gone_dir, lane_path, lanes_root, recovery_dir, resolve_base, toplevel

__all__ = [
    "MIN_VERSION",
    "CreatedLane",
    "LaneError",
    "create_lane",
    "git",
    "gone_dir",
    "lane_env",
    "lane_path",
    "lanes_root",
    "recovery_dir",
    "require_git",
    "resolve_base",
    "toplevel",
    "unique_lane_name",
]
