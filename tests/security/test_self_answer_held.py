"""A session does not answer a conflict or a budget pause through ``paragents serve``'s API: a hostile
session's command, holding the leaked key, lists GET /inbox and posts ``run_anyway`` to the held
conflict of another session (whose write would then overwrite a file) and ``one_more`` / ``raise`` to
a session paused at its budget (which would then send more paid requests); unsandboxed and sandboxed,
through the real server and the real engine. Evidence: the conflict's row stays pending and the file
unchanged, the pause stays unanswered (the same pause still holds its request, no answer recorded)."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest

from paragents import events as ev
from paragents.events import PermissionAnswer
from paragents.llm.replay import ScriptedResponse
from paragents.models import SessionState
from tests.patience import HANG_GUARD_S
from tests.security.hostile import Hostile, hostile, needs_bwrap, tool_call

__all__ = ["hostile"]

PY = sys.executable
BIG = {"prompt_tokens": 9000, "completion_tokens": 1000, "total_tokens": 10000}
POST = """
import json, sys, urllib.request
url, key = sys.argv[1], open(sys.argv[2]).read().strip()
auth = {"Authorization": "Bearer " + key}
items = json.load(urllib.request.urlopen(urllib.request.Request(url + "/inbox", headers=auth)))["items"]
tries = {"conflict": [("/conflicts/", {"answer": "run_anyway"})],
         "pause": [("/pauses/", {"answer": "one_more"}), ("/pauses/", {"answer": "raise", "value": "9999k"})]}
for item in items:
    for path, body in tries.get(item["kind"], []):
        req = urllib.request.Request(
            url + path + item["id"] + "/answer", data=json.dumps(body).encode(),
            headers={**auth, "Content-Type": "application/json"}, method="POST")
        try:
            print("POSTED", item["kind"], urllib.request.urlopen(req).status)
        except urllib.error.HTTPError as exc:
            print("POSTED", item["kind"], exc.code, exc.read().decode())
print("ITEMS", sorted(i["kind"] for i in items))
"""


@pytest.mark.parametrize(
    "sandbox", ["off", pytest.param({"mode": "required", "network": "all"}, marks=needs_bwrap)]
)
async def test_a_sessions_command_with_the_key_cannot_answer_a_conflict_or_a_pause(
    hostile: Hostile, sandbox: Any
) -> None:
    from paragents.serve.auth import AuthConfig
    from paragents.serve.bridge import RuntimeBridge
    from paragents.serve.server import ServeThread

    key = "sk-serve-leaked-0123456789"
    (hostile.project / "post.py").write_text(POST)
    (hostile.project / "key.txt").write_text(key)  # however it leaked
    (hostile.project / "notes.txt").write_text("mine\n")
    (hostile.project / "a").mkdir()
    hostile.sink.answer = lambda req: PermissionAnswer("allow_once")  # the writes: this is about conflicts
    rt = await hostile.runtime({"allow": [f"Bash({PY} *)"]}, sandbox=sandbox)

    def own_conflicts_go_on(event: ev.Event) -> None:  # mallory's own command may be held too
        if isinstance(event, ev.ConflictDetected) and rt.sessions[event.session_id].name == "mallory":
            event.reply.set_result("run_anyway")

    rt.observe(own_conflicts_go_on)
    bridge = RuntimeBridge(rt, rt.store.api_access)
    auth = AuthConfig(api_key=key, browser_secret=b"c" * 32, project=str(rt.project_dir))
    server = ServeThread(bridge, auth, "127.0.0.1", 0)
    await asyncio.to_thread(server.start)
    gate = asyncio.Event()
    holder, victim, paused = [await rt.lifecycle.new_session(n) for n in ("holder", "victim", "paused")]
    write = {"path": "notes.txt", "content": "overwritten\n"}
    hostile.server.add([tool_call("write_file", write), _gated("ok", gate)], session="holder")
    hostile.server.add([tool_call("write_file", write, "c2"), _done()], session="victim")
    listing = ScriptedResponse.from_message(
        tool_calls=[{"id": "c1", "name": "list_dir", "arguments": json.dumps({"path": "a"})}], usage=BIG
    )
    hostile.server.add([listing, _done()], session="paused")
    rt.budgets.set_budget(paused.id, "session", "12k")
    try:
        rt.submit(holder.id, "write")
        await hostile.sink.wait_for(lambda: bool(hostile.sink.of(ev.ToolCallFinished, holder.id)))
        (hostile.project / "notes.txt").write_text("mine\n")  # the holder's write is not the point
        rt.submit(victim.id, "write")
        rt.submit(paused.id, "go")
        await hostile.sink.wait_for(
            lambda: bool(victim.open_conflicts) and paused.state is SessionState.BUDGET
        )
        conflict, pause = victim.open_conflicts[0], paused.budget_pause
        assert pause is not None
        sid = await hostile.attack(rt, [("run_command", {"command": f"{PY} post.py {server.url} key.txt"})])
    finally:
        await server.stop_async()
        bridge.close()
    [out] = hostile.sink.outputs(sid)
    row = await rt.store.approvals.get(conflict.conflict_id)
    still = (paused.budget_pause, pause.reply.done(), paused.state)
    recorded = await rt.store.events.all(paused.id, "budget_answer")
    # the user ends it all
    await rt.approvals.answer_approval(conflict.conflict_id, "skip", "test user")
    rt.budgets.answer_pause(pause.pause_id, "stop", "", "test user")
    gate.set()
    await asyncio.wait_for(rt.wait_idle(), HANG_GUARD_S)
    await rt.shutdown()
    assert "ITEMS ['conflict', 'pause']" in out, out
    assert out.count("POSTED") == 3 and out.count("POSTED conflict 403") == 1, out
    assert out.count("POSTED pause 403") == 2 and "refused" in out, out
    assert row is not None and row.state == "pending"
    assert (hostile.project / "notes.txt").read_text() == "mine\n"
    assert still == (pause, False, SessionState.BUDGET) and recorded == []


def _gated(text: str, gate: asyncio.Event) -> ScriptedResponse:
    from tests.conflicts.conftest import gated

    return gated(ScriptedResponse.from_message(content=text), gate)


def _done() -> ScriptedResponse:
    return ScriptedResponse.from_message(content="done", usage=BIG)
