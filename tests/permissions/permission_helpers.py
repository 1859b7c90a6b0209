"""Small helpers for permission tests: write rule files and decide calls."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from paragents.permissions import Decision, Policy


def write_rules(
    path: Path, allow: Sequence[str] = (), ask: Sequence[str] = (), deny: Sequence[str] = (), **extra: Any
) -> Path:
    """Write a permission file with the given rule lists (and extra ``permissions`` keys); return it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    block: dict[str, Any] = {"allow": list(allow), "ask": list(ask), "deny": list(deny), **extra}
    path.write_text(json.dumps({"permissions": block}), encoding="utf-8")
    return path


def bash(policy: Policy, command: str, cwd: Path, **kw: Any) -> Decision:
    """Decide a Bash call."""
    return policy.decide("Bash", {"command": command}, cwd=cwd, **kw)


def edit(policy: Policy, path: str | Path, cwd: Path, **kw: Any) -> Decision:
    """Decide an Edit call."""
    return policy.decide("Edit", {"path": str(path)}, cwd=cwd, **kw)


def read(policy: Policy, path: str | Path, cwd: Path, **kw: Any) -> Decision:
    """Decide a Read call."""
    return policy.decide("Read", {"path": str(path)}, cwd=cwd, **kw)
