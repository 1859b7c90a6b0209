"""``--load N`` (tests/conftest.py): busy processes that really use the CPU and are really stopped."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import BUSY_LOOP, start_load, stop_load
from tests.patience import HANG_GUARD_S


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100  # utime + stime, in clock ticks (USER_HZ = 100)


def test_load_processes_burn_cpu_and_are_killed() -> None:
    procs = start_load(2)
    try:
        assert len(procs) == 2 and all(p.poll() is None for p in procs)
        deadline = time.monotonic() + HANG_GUARD_S
        while min(_cpu_seconds(p.pid) for p in procs) < 0.2:  # each one spins, not sleeps
            assert time.monotonic() < deadline, "the busy processes used no CPU"
            time.sleep(0.05)
    finally:
        kept = list(procs)
        stop_load(procs)
    assert procs == [] and all(p.returncode is not None for p in kept)


def test_a_busy_process_ends_when_its_parent_dies() -> None:
    """A pytest killed outright (no unconfigure) leaves nothing spinning."""
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import os, subprocess, sys\n"
            f"p = subprocess.Popen([sys.executable, '-c', {BUSY_LOOP!r}, str(os.getpid())])\n"
            "print(p.pid, flush=True)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    parent.wait(timeout=HANG_GUARD_S)
    deadline = time.monotonic() + HANG_GUARD_S
    while _alive(child):
        assert time.monotonic() < deadline, "the busy process outlived its parent"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"
