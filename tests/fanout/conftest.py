"""Fixtures of the fan-out tests: a git repository whose test fails until ``add`` is fixed, a replay
server with scripted candidates (one breaks the build, two pass, one of those with the smaller diff),
and a runtime over both. No model is needed."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from paragents.llm.replay import ReplayServer, ScriptedResponse
from paragents.sessions import Runtime
from tests.lanes.conftest import GIT_ENV, commit_all, sh
from tests.runtime_env import Collector

PROMPT = "fix the add function"
SLUG = "fix-the-add-function"
VERIFY = f"PYTHONDONTWRITEBYTECODE=1 {sys.executable} -m pytest -q -p no:cacheprovider"

BROKEN = "def add(a, b):\n    return a * b\n"
BIG = "# add two numbers\n\n\ndef add(a, b):\n    total = a\n    total += b\n    return total\n"


@pytest.fixture(autouse=True)
def git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    sh(repo, "init", "-q", "-b", "main")
    (repo / "app.py").write_text("def add(a, b):\n    return a - b\n")
    (repo / "test_app.py").write_text(
        "from app import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_zero():\n    assert add(0, 0) == 0\n"
    )
    commit_all(repo, "init")
    return repo


@pytest.fixture
async def server() -> AsyncIterator[ReplayServer]:
    async with ReplayServer(models=["m", "m2"]) as replay:
        yield replay


def reply(content: str = "", **kw: object) -> ScriptedResponse:
    return ScriptedResponse.from_message(content=content, **kw)  # type: ignore[arg-type]


def call(name: str, **args: object) -> ScriptedResponse:
    return reply(tool_calls=[{"id": "c1", "name": name, "arguments": json.dumps(args)}])


def script_candidates(server: ReplayServer, slug: str = SLUG) -> None:
    """Candidate 1 breaks the build, 2 passes with a bigger diff, 3 passes with the smallest."""
    server.add([call("write_file", path="app.py", content=BROKEN), reply("done")], session=f"{slug}-1")
    server.add([call("write_file", path="app.py", content=BIG), reply("done")], session=f"{slug}-2")
    server.add(
        [call("edit_file", path="app.py", old_string="a - b", new_string="a + b"), reply("done")],
        session=f"{slug}-3",
    )


async def make_runtime(
    server: ReplayServer, project: Path, db: Path, **overrides: object
) -> tuple[Runtime, Collector]:
    cfg = {
        "base_url": server.base_url,
        "model": "m",
        "models": {"m": {}, "m2": {}},
        "max_retries": 0,
        "sandbox": "off",
        "max_parallel_turns": 2,
        **overrides,
    }
    rt = await Runtime.create(project, cli_overrides=cfg, db_path=db)
    sink = Collector()
    rt.set_sink(sink)
    return rt, sink
