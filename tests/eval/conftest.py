"""Fixtures of the eval tests: the scripted solver on a loopback replay server, run options over the
sample tasks, and the real bubblewrap (the hidden tests run in it; the tests are skipped without it,
and fail in CI, which installs it)."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from paragents.eval.answers import AnswerPolicy, load_policy
from paragents.eval.loader import load_tasks
from paragents.eval.runner import Endpoint, RunOptions
from paragents.eval.targets import Target
from paragents.eval.tasks import TaskSet
from paragents.llm.replay import ReplayServer
from paragents.tools.sandbox import SandboxConfig, check
from tests.eval.solver import SOLVER_MODEL, queue
from tests.lanes.conftest import GIT_ENV

BWRAP_WORKS = shutil.which("bwrap") is not None and check(SandboxConfig()).active
needs_bwrap = pytest.mark.skipif(
    not BWRAP_WORKS and not os.environ.get("PARAGENTS_CI"),
    reason="bwrap (Debian package bubblewrap) is not installed or cannot create a sandbox here",
)
PRICES = {"input_price_per_mtok": 1.0, "output_price_per_mtok": 4.0}
DATA = Path(__file__).resolve().parent / "data"
collect_ignore_glob = ["data/*"]
"""Task data (hidden tests of tasks, recorded runs), never tests of paragents."""


@pytest.fixture(autouse=True)
def git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)


@pytest.fixture
async def solver() -> AsyncIterator[ReplayServer]:
    async with ReplayServer(models=[SOLVER_MODEL]) as server:
        yield server


def sample(*ids: str) -> TaskSet:
    tasks = load_tasks("sample")
    return tasks.only(list(ids)) if ids else tasks


def scripted_options(
    tasks: TaskSet,
    out: Path,
    server: ReplayServer,
    *,
    policy: AnswerPolicy | None = None,
    trials: int = 1,
    fanout: int = 1,
    parallel: int = 2,
    max_budget: str | None = None,
    extra: dict[str, Any] | None = None,
    queue_replies: bool = True,
) -> RunOptions:
    """Options of a run of ``tasks`` by the scripted solver (target 1, priced), its replies queued."""
    target = Target(f"model:{SOLVER_MODEL}", "model", SOLVER_MODEL, 1)
    if queue_replies:
        queue(server, 1, trials, [t.id for t in tasks.tasks])
    shaping: dict[str, Any] = {"models": {SOLVER_MODEL: PRICES}, "max_retries": 0, **(extra or {})}
    return RunOptions(
        tasks=tasks,
        tasks_spec=tasks.source if tasks.name != "sample" else "sample",
        targets=[target],
        out=out,
        policy=policy or load_policy("allow-safe"),
        endpoints={target.label: Endpoint(server.base_url)},
        shaping=shaping,
        trials=trials,
        fanout=fanout,
        parallel=parallel,
        max_budget=max_budget,
    )
