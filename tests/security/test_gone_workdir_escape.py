"""An OPEN session whose directory is removed under it (a lane discarded while its panel is open
elsewhere, ``rm -rf`` by the user): every tool call refuses with one message naming the missing
directory and what to do, and none makes the removed path again (``write_file`` made it as a plain
folder; a command failed with "cannot start bwrap: No such file or directory"). Through the real
engine (scripted model, real policy, real bwrap where marked) and a real ACP agent; the host is then
checked: the removed directory does not exist (fresh-user finding after issue 29)."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from paragents import events as ev
from paragents.llm.replay import ScriptedResponse
from paragents.sessions.runtime import Runtime
from tests.patience import HANG_GUARD_S
from tests.security.acp_attack import AGENT, AcpAttack, acp, term
from tests.security.hostile import Hostile, hostile, needs_bwrap, tool_call

__all__ = ["acp", "hostile"]

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("write_file", {"path": "app.py", "content": "print(1)\n"}),
    ("write_file", {"path": "deep/er/x.txt", "content": "x\n"}),
    ("edit_file", {"path": "app.py", "old_string": "1", "new_string": "2"}),
    ("read_file", {"path": "app.py"}),
    ("run_command", {"command": "touch made.txt && mkdir -p more"}),
    ("grep", {"pattern": "print"}),
    ("glob", {"pattern": "**/*.py"}),
    ("list_dir", {}),
]


async def _attack_gone(hostile: Hostile, rt: Runtime, work: Path) -> list[str]:
    """Open a session in ``work`` (bypassPermissions: nothing asks), remove ``work``, let the model make
    every call of :data:`CALLS`; return what each call told the model."""
    view = await rt.lifecycle.new_session("lane-ish", workdir=work, mode="bypassPermissions")
    shutil.rmtree(work)
    replies = [tool_call(name, args, f"c{i}") for i, (name, args) in enumerate(CALLS)]
    hostile.server.add([*replies, ScriptedResponse.from_message(content="done")], session="lane-ish")
    rt.submit(view.id, "go")
    await asyncio.wait_for(rt.wait_idle(view.id), HANG_GUARD_S)
    return hostile.sink.outputs(view.id)


def _assert_refused(outputs: list[str], work: Path) -> None:
    assert len(outputs) == len(CALLS)
    for (name, _args), out in zip(CALLS, outputs, strict=True):
        assert out.startswith("error: nothing was run"), (name, out)
        assert f"its directory {work} no longer exists" in out, (name, out)
        assert "close this session" in out, (name, out)
        assert "git bundle" not in out, (name, out)  # not a lane: no lane bundle to point to
        assert "bwrap" not in out
    assert not work.exists()


@needs_bwrap
async def test_tools_of_an_open_session_whose_directory_is_gone_refuse_sandboxed(hostile: Hostile) -> None:
    work = hostile.project / "lane"
    work.mkdir()
    rt = await hostile.runtime(sandbox={"mode": "required"})
    try:
        outputs = await _attack_gone(hostile, rt, work)
    finally:
        await rt.shutdown()
    _assert_refused(outputs, work)
    assert hostile.asked() == []


async def test_tools_of_an_open_session_whose_directory_is_gone_refuse_unsandboxed(hostile: Hostile) -> None:
    work = hostile.project / "lane"
    work.mkdir()
    rt = await hostile.runtime(sandbox="off")
    try:
        outputs = await _attack_gone(hostile, rt, work)
    finally:
        await rt.shutdown()
    _assert_refused(outputs, work)
    # the transcript shows the same refusal as the model's result
    finished = hostile.sink.of(ev.ToolCallFinished)
    assert [f.status for f in finished] == ["error"] * len(CALLS)


@pytest.mark.parametrize("sandbox", ["off", pytest.param("required", marks=needs_bwrap)])
async def test_an_acp_agents_requests_in_a_gone_directory_are_refused(acp: AcpAttack, sandbox: str) -> None:
    """``terminal/create``, ``fs/write_text_file`` and ``fs/read_text_file`` of an external agent."""
    work = acp.project / "lane"
    work.mkdir()
    # the agent's process starts in the project: only the session's directory is removed
    agent = {"command": sys.executable, "args": [str(AGENT)], "cwd": str(acp.project)}
    rt = await Runtime.create(
        acp.project,
        cli_overrides={"model": "m", "agents": {"hostile": agent}, "sandbox": sandbox},
        db_path=acp.db,
    )
    rt.set_sink(acp.sink)
    try:
        view = await rt.lifecycle.new_agent_session("hostile", "mallory", workdir=work)
        await rt.controls.set_mode(view.id, "bypassPermissions")
        shutil.rmtree(work)
        requests = [
            term("touch made.txt"),
            {"write": [str(work / "app.py"), "x\n"]},
            {"read": str(work / "app.py")},
        ]
        rt.submit(view.id, "\n".join(json.dumps(r) for r in requests))
        await asyncio.wait_for(rt.wait_idle(view.id), HANG_GUARD_S)
        said = "".join(e.text for e in acp.sink.of(ev.TextDelta, view.id))
    finally:
        await rt.shutdown()
    for verb in ("term", "write", "read"):
        assert f"{verb} refused: " in said, said
    assert said.count(f"its directory {work} no longer exists") == 3, said
    assert not work.exists()
