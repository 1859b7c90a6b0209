"""The core never imports Textual: only paragents/ui may (checked in a fresh interpreter)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import paragents
from tests.patience import HANG_GUARD_S


def core_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(paragents.__path__, "paragents."):
        if info.name.startswith("paragents.ui") or info.name.startswith("paragents.demo"):
            continue
        names.append(info.name)
    return names


def test_core_modules_do_not_import_textual() -> None:
    modules = core_modules()
    assert "paragents.agent" in modules and "paragents.sessions.runtime" in modules
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "print(','.join(bad))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "", f"core imported textual: {proc.stdout.strip()}"


def test_no_import_cycles_among_paragents_modules() -> None:
    """No paragents module imports (directly or not) one that imports it back."""
    import grimp

    graph = grimp.build_graph("paragents")
    modules = sorted(graph.modules)
    for module in modules:
        for imported in graph.find_modules_directly_imported_by(module):
            if imported.startswith("paragents") and imported != module:
                back = graph.find_shortest_chain(importer=imported, imported=module)
                assert back is None, f"cycle: {module} -> {' -> '.join(back or ())}"
