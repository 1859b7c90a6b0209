"""Load the shared permission fixtures (tests/fixtures_shared/permissions) re-rooted under a temp dir.

The fixture format is described in the fixtures README ("permissions/" section): absolute paths in
``cwd``, ``home``, ``fs``, absolute symlink targets, ``//abs`` rule paths and Read/Edit inputs are
moved under one temp root; ``~`` keeps meaning the (re-rooted) home.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_TESTS = Path(__file__).resolve().parents[1]
# Same lookup as tests/conftest.py's shared_fixtures_dir(); not imported from there because several
# test folders have a conftest module and the name ``conftest`` is ambiguous on sys.path.
FIXTURE_DIR = (
    _TESTS / "fixtures_shared"
    if (_TESTS / "fixtures_shared").is_dir()
    else _TESTS.parent.parent / "shared" / "fixtures"
) / "permissions"


def fixture_files() -> list[Path]:
    """Return every permission fixture file, sorted by name."""
    return sorted(FIXTURE_DIR.glob("*.json"))


@dataclass
class Case:
    """One fixture made concrete under ``root``: settings file written, filesystem created."""

    data: dict[str, Any]
    root: Path
    cwd: Path
    home: Path
    settings_path: Path

    def tool_input(self, tool: str, given: dict[str, Any]) -> dict[str, Any]:
        """Return ``given`` with an absolute Read/Edit ``path`` moved under the root."""
        out = dict(given)
        path = out.get("path")
        if tool in ("Read", "Edit") and isinstance(path, str) and path.startswith("/"):
            out["path"] = self.reroot(path)
        return out

    def reroot(self, path: str) -> str:
        """Return absolute ``path`` moved under the temp root."""
        return str(self.root) + path


def case_insensitive_disk(directory: Path) -> bool:
    """Return True when ``directory``'s filesystem ignores letter case."""
    probe = directory / "CaseProbe"
    probe.write_text("", encoding="utf-8")
    try:
        return (directory / "caseprobe").exists()
    finally:
        probe.unlink()


def _reroot_rule(rule: str, root: Path) -> str:
    name, paren, spec = rule.partition("(")
    if paren and name in ("Read", "Edit") and spec.startswith("//"):
        return f"{name}(/{root}{spec[1:]}"
    return rule


def materialise(path: Path, tmp: Path) -> Case:
    """Create the fixture's filesystem under ``tmp`` and write its settings; return the Case."""
    data = json.loads(path.read_text(encoding="utf-8"))
    root = tmp / "root"
    cwd = Path(str(root) + data["cwd"])
    home = Path(str(root) + data["home"])
    for d in (cwd, home):
        d.mkdir(parents=True, exist_ok=True)
    fs = data.get("fs", {})
    for d in fs.get("dirs", []):
        Path(str(root) + d).mkdir(parents=True, exist_ok=True)
    for f in fs.get("files", []):
        target = Path(str(root) + f)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("fixture\n", encoding="utf-8")
    for link, target in fs.get("symlinks", {}).items():
        link_path = Path(str(root) + link)
        link_path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(str(root) + target if target.startswith("/") else target, link_path)
    settings = {
        kind: [_reroot_rule(r, root) for r in data["settings"].get(kind, [])]
        for kind in ("allow", "ask", "deny")
    }
    settings_path = tmp / "settings" / "permissions.json"
    settings_path.parent.mkdir(parents=True, exist_ok=True)
    settings_path.write_text(json.dumps({"permissions": settings}), encoding="utf-8")
    return Case(data=data, root=root, cwd=cwd, home=home, settings_path=settings_path)
