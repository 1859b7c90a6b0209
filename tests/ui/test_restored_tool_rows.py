"""A restored tool row reads as the live one did: the tool's own summary (not raw ``key=value`` cut at
40 columns) and its sandbox tag; a call id a server reuses in a later request keeps each row its own.
A real Runtime against the loopback server, restarted on the same store."""

from __future__ import annotations

import json
from typing import Any

from paragents.llm.replay import ReplayServer
from paragents.llm.replay_script import ScriptedResponse
from paragents.ui.app import make_app
from paragents.ui.widgets.tool_call import ToolEntry
from tests.ui.conftest import SIZE, wait_until
from tests.ui.helpers import started

LONG = "printf '[/] %s\\n' " + " ".join(f"word{i}" for i in range(30))


def command(call_id: str, cmd: str) -> ScriptedResponse:
    args = json.dumps({"command": cmd})
    return ScriptedResponse.from_message(
        tool_calls=[{"id": call_id, "name": "run_command", "arguments": args}]
    )


def rows(panel: Any) -> list[tuple[str, str, str]]:
    return [(e.call_id, e.summary, e.status) for e in panel.transcript.records if isinstance(e, ToolEntry)]


async def test_restored_tool_rows_read_as_the_live_ones(make_runtime: Any, replay: ReplayServer) -> None:
    replay.add(
        [command("call_0", LONG), command("call_0", "printf second"), ScriptedResponse.from_message("done")],
        session="s1",
    )
    runtime = await make_runtime()
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        (panel,) = await started(pilot, app)
        await runtime.set_mode(panel.session_id, "bypassPermissions")
        runtime.submit(panel.session_id, "run it")
        await runtime.wait_idle(panel.session_id)
        await wait_until(pilot, lambda: len(rows(panel)) == 2 and rows(panel)[-1][2] == "ok", "both rows")
        live = rows(panel)
        await app.action_quit()
    assert live[0][1].startswith("run_command printf '[/] %s") and "command=" not in live[0][1]
    assert live[1][1].startswith("run_command printf second")

    again = make_app(await make_runtime())
    async with again.run_test(size=SIZE) as pilot:
        (panel,) = await started(pilot, again)
        assert rows(panel) == live  # summary, sandbox tag and status: as shown live, each call its own
        await again.action_quit()
