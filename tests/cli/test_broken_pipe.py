"""`paragents ... | head`: the reader leaving early ends the command quietly (no traceback)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.patience import HANG_GUARD_S


def test_a_closed_stdout_ends_the_command_quietly_with_141_and_no_traceback(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader (`head`) has already gone: every write gets EPIPE
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "paragents.cli",
                "permissions",
                "check",
                "--tool",
                "Bash",
                "--input",
                '{"command": "ls"}',
                "--json",
            ],
            cwd=tmp_path,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=HANG_GUARD_S,
            check=False,
        )
    finally:
        os.close(write_end)
    assert "Traceback" not in done.stderr
    assert "BrokenPipeError" not in done.stderr
    assert done.returncode == 141
