"""Shared test fixtures: every test runs with its own config and state dirs, never the real home."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest_plugins = ["tests.backends.engine"]
"""The real Docker engine and lane image fixtures (issue 31), used by tests/backends and tests/security."""

SHARED = Path(__file__).resolve().parents[2] / "shared"
"""The workplace's shared/ folder (fixtures live in shared/fixtures); may be absent outside CI."""


def shared_fixtures_dir() -> Path:
    """Return ``shared/fixtures`` next to the repo, or ``tests/fixtures_shared`` (a vendored copy)."""
    vendored = Path(__file__).resolve().parent / "fixtures_shared"
    if vendored.is_dir():
        return vendored
    return SHARED / "fixtures"


BUSY_LOOP = """
import os, sys
parent = int(sys.argv[1])
while os.getppid() == parent:
    for _ in range(1_000_000):
        pass
"""
"""What each ``--load`` process runs: one core's worth of pure CPU, no I/O, until it is killed or
pytest dies (argv[1] is pytest's pid; the loop checks its parent about every 20 ms, so a killed
pytest leaves nothing spinning)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--load",
        type=int,
        default=0,
        metavar="N",
        help="run the tests while N busy processes load the CPU (catches lost wake-ups and timing races "
        "that pass on an idle machine); the processes are killed when the run ends",
    )
    # ``--monkey-minutes N``: run the UI monkey test (tests/ui/test_monkey.py) with random seeds for
    # N minutes instead of its short seeded run.
    parser.addoption(
        "--monkey-minutes",
        type=float,
        default=0.0,
        help="run tests/ui/test_monkey.py's long mode for this many minutes (random seeds)",
    )


_LOAD: list[subprocess.Popen[bytes]] = []


def start_load(count: int) -> list[subprocess.Popen[bytes]]:
    """Start ``count`` busy-loop processes (:data:`BUSY_LOOP`); :func:`stop_load` ends them."""
    return [
        subprocess.Popen([sys.executable, "-c", BUSY_LOOP, str(os.getpid())], stdin=subprocess.DEVNULL)
        for _ in range(count)
    ]


def stop_load(procs: list[subprocess.Popen[bytes]]) -> None:
    """Kill the busy processes started by :func:`start_load` and reap them."""
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
    for proc in procs:
        proc.wait(timeout=10)
    procs.clear()


SDK_NAMED = ("acp", "mcp")
"""Test folders named like an SDK paragents imports. pytest (importmode "prepend") puts ``tests/`` on
``sys.path`` for the test folders that are packages (tests/lanes, tests/security ...): an
``__init__.py`` in tests/mcp would make ``import mcp`` load the test folder instead of the SDK. Without
one the folder is at most a namespace portion, and a namespace portion never wins over an installed
package (tests/README.md)."""


def pytest_configure(config: pytest.Config) -> None:
    for name in SDK_NAMED:
        marker = Path(__file__).parent / name / "__init__.py"
        if marker.exists():
            raise pytest.UsageError(f"{marker}: remove it; tests/{name} would shadow the {name} SDK")
    count = config.getoption("--load", 0)
    if count < 0:
        raise pytest.UsageError("--load takes a number of busy processes (0 or more)")
    if count:
        _LOAD.extend(start_load(count))


def pytest_report_header(config: pytest.Config) -> str | None:
    if _LOAD:
        pids = ", ".join(str(p.pid) for p in _LOAD)
        return f"load: {len(_LOAD)} busy processes (pids {pids}) on {os.cpu_count()} cores"
    return None


@pytest.fixture(autouse=True)
def isolated_dirs(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Point config, state, managed-settings and HOME at a fresh temp dir; clear key env vars."""
    root = tmp_path_factory.mktemp("paragents-home")
    monkeypatch.setenv("HOME", str(root / "home"))
    monkeypatch.setenv("PARAGENTS_CONFIG_DIR", str(root / "config"))
    monkeypatch.setenv("PARAGENTS_STATE_DIR", str(root / "state"))
    monkeypatch.setenv("PARAGENTS_MANAGED_SETTINGS", str(root / "managed" / "managed-permissions.json"))
    for var in (
        "OPENAI_API_KEY",
        "PARAGENTS_API_KEY",
        "PARAGENTS_BASE_URL",
        "PARAGENTS_MODEL",
        "CLAUDE_CONFIG_DIR",
    ):
        monkeypatch.delenv(var, raising=False)
    (root / "home").mkdir()
    yield root


_EXIT_STATUS = [0]


def _leaked_threads() -> list:
    import threading

    return [
        t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon and t.is_alive()
    ]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Remember the exit status and report threads a test leaked (they would keep the process alive)."""
    _EXIT_STATUS[0] = int(exitstatus)
    leaked = _leaked_threads()
    if leaked:
        print(
            "\nLEAKED NON-DAEMON THREADS (a test did not close its store/runtime):", [t.name for t in leaked]
        )


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the ``--load`` processes; never let a leaked thread hang the run (CI would wait 90
    minutes): exit with pytest's status."""
    stop_load(_LOAD)
    if _leaked_threads():
        import os
        import sys

        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_EXIT_STATUS[0] or 1)
