"""``paragents`` run as a real subprocess (``python -m paragents.cli``) with extra environment."""

from __future__ import annotations

import os
import subprocess
import sys


def paragents(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "paragents.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )
