"""``paragents`` as a real subprocess in a project dir, and ``paragents run --json`` against a replay
server (``run_json``: the exit code and the parsed JSON)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from paragents.llm.replay import ThreadedReplayServer
from tests.patience import HANG_GUARD_S


def paragents(
    *args: str, cwd: Path, stdin: str | None = None, extra_env: dict | None = None
) -> subprocess.CompletedProcess:
    env = {**os.environ, **(extra_env or {})}
    return subprocess.run(
        [sys.executable, "-m", "paragents.cli", *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )


def run_json(server: ThreadedReplayServer, cwd: Path, *extra: str, prompt: str = "hi") -> tuple[int, dict]:
    proc = paragents(
        "run", "--endpoint", server.base_url, "--model", "m", "--json", *extra, prompt, cwd=cwd, stdin=""
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout)
