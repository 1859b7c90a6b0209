"""``PARAGENTS_BASE_URL`` / ``PARAGENTS_MODEL`` (the README's Configuration) are enough to run without
a ``runtime_config.json``: ``paragents run`` as a real subprocess against a loopback replay server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from paragents.llm.replay import ScriptedResponse, ThreadedReplayServer
from tests.patience import HANG_GUARD_S


@pytest.fixture
def server() -> Iterator[ThreadedReplayServer]:
    with ThreadedReplayServer(models=["m"]) as srv:
        yield srv


def run(cwd: Path, env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PARAGENTS_") or k.endswith("_DIR")}
    return subprocess.run(
        [sys.executable, "-m", "paragents.cli", *argv],
        cwd=cwd, env={**clean, **env}, input="", capture_output=True, text=True, timeout=HANG_GUARD_S,
    )  # fmt: skip


def test_run_takes_its_endpoint_and_model_from_the_environment(
    server: ThreadedReplayServer, tmp_path: Path
) -> None:
    server.add(ScriptedResponse.from_message(content="from the env endpoint"))
    env = {"PARAGENTS_BASE_URL": server.base_url, "PARAGENTS_MODEL": "m"}
    proc = run(tmp_path, env, "run", "--json", "hi")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["status"] == "completed" and out["messages"][-1]["content"] == "from the env endpoint"
    assert server.requests[-1].body_json["model"] == "m"


def test_without_config_or_endpoint_run_names_both_ways(tmp_path: Path) -> None:
    proc = run(tmp_path, {}, "run", "hi")
    assert proc.returncode == 2
    assert "no runtime_config.json found" in proc.stderr and "PARAGENTS_BASE_URL" in proc.stderr
    assert "Traceback" not in proc.stderr
