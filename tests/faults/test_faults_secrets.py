"""Secrets: a full run with a distinctive key (TUI via Pilot with two sessions, a 401, /show-config and
screenshots; then ``paragents run`` and ``paragents sessions export`` subprocesses), after which every
artifact is searched for the key. The server must see it only in the Authorization header."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from paragents.llm.replay import ReplayServer, ScriptedResponse
from paragents.sessions.runtime import Runtime
from paragents.ui.app import make_app
from tests.faults.tally import record
from tests.patience import HANG_GUARD_S
from tests.ui.conftest import SIZE, wait_until

KEY = "sk-test-SECRET-7f3a9c1e5b2d4f60a8c9e1d3b5f7a9c2"
MIDDLE = "SECRET-7f3a9c1e5b2d4f60a8c9e1d3b5f7"
"""A piece of the key that its redacted form (``sk-…a9c2``) never shows."""


def echo_401() -> ScriptedResponse:
    """A 401 whose body echoes the key back, as some providers do."""
    body = json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}", "code": 401}})
    return ScriptedResponse(status=401, headers={"Content-Type": "application/json"}, reads=[body])


@pytest.fixture
async def replay() -> AsyncIterator[ReplayServer]:
    async with ReplayServer(models=["m"]) as server:
        yield server


async def cli(*argv: str, cwd: Path) -> tuple[int, bytes, bytes]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "paragents.cli", *argv, cwd=cwd, env=dict(os.environ),
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out, err


async def test_the_key_appears_in_no_artifact(
    replay: ReplayServer, tmp_path: Path, isolated_dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PARAGENTS_API_KEY", KEY)
    project = tmp_path / "proj"
    project.mkdir()
    shots = tmp_path / "shots"
    shots.mkdir()
    outputs: list[bytes] = []
    leaks: list[str] = []
    try:
        rt = await Runtime.create(project, cli_overrides={"base_url": replay.base_url, "model": "m"})
        replay.add(ScriptedResponse.from_message("hello from s1", tool_calls=None), session="s1")
        replay.add(echo_401(), session="s2")
        app = make_app(rt)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.ready and len(app.panels) == 1, "first panel")
            await pilot.press(*"hi", "enter")
            await pilot.press("ctrl+n")
            await wait_until(pilot, lambda: len(app.panels) == 2, "second panel")
            await pilot.press(*"fail please", "enter")
            views = list(rt.sessions.values())
            await wait_until(
                pilot, lambda: all(v.last_result for v in views), "both turns end", timeout=HANG_GUARD_S
            )
            assert [v.last_result.status.value for v in views if v.last_result] == ["completed", "failed"]
            await pilot.pause()
            app.save_screenshot(filename="after-401.svg", path=str(shots))
            await pilot.press(*"/show-config", "enter")
            await wait_until(pilot, lambda: len(app.screen_stack) > 1, "the config screen")
            await pilot.pause()
            shown = app.export_screenshot()
            assert "sk-…a9c2" in shown or "sk-&#8230;a9c2" in shown or "a9c2" in shown, (
                "the key is shown redacted"
            )
            app.save_screenshot(filename="show-config.svg", path=str(shots))
            outputs.append(shown.encode())
            await pilot.press("escape")
            await app.shutdown_runtime()

        # headless: a good run, a 401 run (json), and an export
        for session, reply in (("h1", ScriptedResponse.from_message("headless hello")), ("h2", echo_401())):
            replay.add(reply, session=session)
            code, out, err = await cli(
                "run", "--session", session, "--endpoint", replay.base_url, "--model", "m", "--json", "go",
                cwd=project,
            )  # fmt: skip
            outputs += [out, err]
            assert code == (0 if session == "h1" else 2), err
            assert b"Traceback" not in err
        for name in ("s2", "h2"):
            code, out, err = await cli("sessions", "export", name, "--format", "json", cwd=project)
            assert code == 0, err
            outputs += [out, err]
        code, out, err = await cli("sessions", "list", cwd=project)
        outputs += [out, err]

        # every request carried the key in Authorization only
        assert len(replay.requests) >= 4
        for request in replay.requests:
            assert request.headers.get("authorization") == f"Bearer {KEY}"
            others = {k: v for k, v in request.headers.items() if k != "authorization"}
            assert KEY not in json.dumps(others) and KEY not in json.dumps(request.body_json)

        # grep every artifact
        roots = [isolated_dirs, project, shots]
        files = [p for root in roots for p in root.rglob("*") if p.is_file()]
        assert any(p.name == "paragents.db" for p in files)
        assert len(list(shots.iterdir())) == 2
        for path in files:
            data = path.read_bytes()
            if KEY.encode() in data or MIDDLE.encode() in data:
                leaks.append(str(path))
        for i, data in enumerate(outputs):
            if KEY.encode() in data or MIDDLE.encode() in data:
                leaks.append(f"output #{i}: {data[:200]!r}")
        assert leaks == [], f"the key leaked into: {leaks}"
    finally:
        record("secrets: full run grepped for the key", recovered=not leaks, runs=1)
