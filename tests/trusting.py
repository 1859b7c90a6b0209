"""Tests that give a project files needing trust (paragents.trust) trust them as the user would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from paragents import trust


def trusted(project: Path) -> Path:
    """Trust every file of ``project`` that runs commands or allows more, as it is now; return it."""
    trust.trust(project, trust.project_posture(project))
    return project


def trusted_config(project: Path, config: dict[str, Any]) -> Path:
    """Write ``config`` as the project's ``runtime_config.json`` and trust it; return its path."""
    path = project / "runtime_config.json"
    path.write_text(json.dumps(config))
    trusted(project)
    return path
