"""``paragents run --agent NAME``: one prompt headless through an external ACP agent (the fake one),
under the same rules: a deny rule stops its ``rm`` without a prompt, an allowed write goes through."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.acp.conftest import FAKE_AGENT
from tests.trusting import trusted_config


def test_run_with_an_agent_applies_the_rules_and_names_the_run_session(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "notes.txt").write_text("v1\n")
    agent = {"command": sys.executable, "args": [str(FAKE_AGENT)]}
    cfg = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "agents": {"fake": agent}}
    trusted_config(project, cfg)
    prompt = "say hi\nrun rm notes.txt\nwrite notes.txt v2"
    argv = [sys.executable, "-c", "from paragents.cli import main; main()", "run", "--agent", "fake"]
    argv += ["--dir", str(project), "--deny", "Bash(rm *)", "--allow", "Edit", prompt]
    env = {**os.environ, "PARAGENTS_API_KEY": "x"}
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=180, env=env, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout + done.stderr
    assert "denied by policy: rm notes.txt" in out and "written" in out
    assert "session run-1" in out
    assert (project / "notes.txt").read_text() == "v2\n"


def test_run_with_an_agent_keeps_the_mode(tmp_path: Path) -> None:
    """Issue 26 item 11: ``--mode acceptEdits`` applies to the agent's requests (an edit inside the
    project runs without asking; in default mode, with no terminal, it would be denied)."""
    project = tmp_path / "proj"
    project.mkdir()
    agent = {"command": sys.executable, "args": [str(FAKE_AGENT)]}
    cfg = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "agents": {"fake": agent}}
    trusted_config(project, cfg)
    env = {**os.environ, "PARAGENTS_API_KEY": "x"}
    results = {}
    for mode in ("default", "acceptEdits"):
        argv = [sys.executable, "-c", "from paragents.cli import main; main()", "run", "--agent", "fake"]
        argv += ["--dir", str(project), "--mode", mode, "--json", f"write {mode}.txt made"]
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=180, env=env, stdin=subprocess.DEVNULL
        )
        assert done.returncode == 0, done.stderr
        results[mode] = (project / f"{mode}.txt").exists()
    assert results == {"default": False, "acceptEdits": True}
