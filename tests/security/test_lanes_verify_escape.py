"""Escape test (issue 25 item 7): code a candidate wrote runs when ``/fanout --verify`` verifies it, in
the lane's sandbox, never on the host. The scripted (hostile) model of candidate 1 writes a
``conftest.py`` into its lane that, when pytest loads it, tries to write files outside the lane (a
folder under ``/var/tmp``, outside the sandbox's private ``/tmp``, so a miss proves the read-only
bind and not just the private ``/tmp``; the main checkout) and records the environment it got. The
real engine runs it: lanes, file tools, the fan-out group and its verify. Evidence on the host: the
files outside are absent, no planted secret reached the command, and the verify still ran (the
conftest's own record in the lane says so).

Fixtures are this file's own (the escape suite's shared ones live in tests/security/conftest.py)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from paragents.events import PermissionAnswer
from paragents.fanout.compare import compare
from paragents.fanout.group import start_best_of
from paragents.fanout.request import FanoutRequest
from paragents.llm.replay import ReplayServer, ScriptedResponse
from paragents.sessions import Runtime
from paragents.tools.sandbox import SandboxConfig, check
from tests.lanes.conftest import GIT_ENV, commit_all, sh
from tests.runtime_env import Collector

SECRET = "sk-lanes-escape-0123456789"
VERIFY = f"PYTHONDONTWRITEBYTECODE=1 {sys.executable} -m pytest -q -p no:cacheprovider"

CONFTEST = """
import json, os, pathlib
here = pathlib.Path(__file__).parent
tried = {{}}
for target in {targets!r}:
    try:
        pathlib.Path(target).write_text("escaped")
        tried[target] = "written"
    except OSError as exc:
        tried[target] = type(exc).__name__ + ": " + str(exc.strerror)
(here / "attempts.json").write_text(json.dumps({{"tried": tried, "env": dict(os.environ)}}))
"""


def _bwrap_works() -> bool:
    return check(SandboxConfig(mode="required")).active


pytestmark = pytest.mark.skipif(
    not _bwrap_works() and not os.environ.get("PARAGENTS_CI"), reason="bubblewrap cannot sandbox here"
)


@pytest.fixture
def evidence() -> Iterator[Path]:
    """A folder outside ``/tmp`` (the sandbox's private ``/tmp`` would hide one inside it)."""
    base = Path("/var/tmp") if os.access("/var/tmp", os.W_OK) else Path.home()
    folder = Path(tempfile.mkdtemp(prefix="paragents-lanes-escape-", dir=base))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def repo(evidence: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The main checkout, outside ``/tmp`` too: the sandbox must show it read-only, not hide it."""
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    repo = evidence / "repo"
    repo.mkdir()
    sh(repo, "init", "-q", "-b", "main")
    (repo / "app.py").write_text("def add(a, b):\n    return a - b\n")
    (repo / "test_app.py").write_text("from app import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    commit_all(repo, "init")
    return repo


@pytest.fixture
async def server() -> AsyncIterator[ReplayServer]:
    async with ReplayServer(models=["m"]) as replay:
        yield replay


def _call(name: str, **args: object) -> ScriptedResponse:
    return ScriptedResponse.from_message(
        tool_calls=[{"id": "c1", "name": name, "arguments": json.dumps(args)}]
    )


async def test_a_conftest_written_by_a_candidate_cannot_write_outside_its_lane(
    server: ReplayServer, repo: Path, evidence: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PARAGENTS_API_KEY", SECRET)
    monkeypatch.setenv("GH_TOKEN", SECRET)
    outside = evidence / "escaped-from-verify"
    into_main = repo / "escaped-into-main"
    conftest = CONFTEST.format(targets=[str(outside), str(into_main)])
    fix = "def add(a, b):\n    return a + b\n"
    server.add(
        [
            _call("write_file", path="conftest.py", content=conftest),
            _call("write_file", path="app.py", content=fix),
            ScriptedResponse.from_message(content="done"),
        ],
        session="fix-add-1",
    )
    server.add(
        [_call("write_file", path="app.py", content=fix), ScriptedResponse.from_message(content="done")],
        session="fix-add-2",
    )
    cfg = {"base_url": server.base_url, "model": "m", "max_retries": 0, "sandbox": "required"}
    rt = await Runtime.create(repo, cli_overrides=cfg, db_path=tmp_path / "db.sqlite")
    sink = Collector()
    rt.set_sink(sink)
    sink.answers.extend([PermissionAnswer("allow_once")] * 8)
    try:
        group = await start_best_of(rt, FanoutRequest(2, "fix add", verify=VERIFY), open_panel=False)
        await group.done.wait()
        cmp = await compare(rt.store.fanout, group.id)
        hostile = cmp.find(1)
        assert hostile.verify is not None and hostile.verify.passed, hostile.verify  # verify did run
        lane = Path(hostile.record.lane_path or "")
        record = json.loads((lane / "attempts.json").read_text())  # the conftest ran, in the lane
    finally:
        await rt.shutdown()
    # the host's evidence: nothing written outside the lane ...
    assert not outside.exists() and not into_main.exists()
    assert all(result != "written" for result in record["tried"].values()), record["tried"]
    # ... and no secret reached the command paragents ran
    assert SECRET not in json.dumps(record["env"])
    assert (repo / "app.py").read_text() == "def add(a, b):\n    return a - b\n"
