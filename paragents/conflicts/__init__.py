"""Preflight conflict checks between sessions (write reservations, stale reads, shared resources).

``checker`` holds :class:`ConflictChecker` (the ``Agent`` preflight hook, reservations in the store),
``targets`` what a call writes and when two paths overlap, ``reads`` the per-session stale-read memory.
Nothing here imports Textual.
"""

from paragents.conflicts.checker import UNATTENDED_WAIT, ConflictChecker, Held
from paragents.conflicts.reads import ReadTracker, Stale, make_diff
from paragents.conflicts.targets import CallTargets, call_targets, matching_resources, paths_overlap

__all__ = [
    "UNATTENDED_WAIT",
    "CallTargets",
    "ConflictChecker",
    "Held",
    "ReadTracker",
    "Stale",
    "call_targets",
    "make_diff",
    "matching_resources",
    "paths_overlap",
]
