"""Done-when: a scripted 200-turn session against a 2,000-token window runs to the end with
automatic compactions; every request is valid and under the window; the task and the notes are
still in context at the end; the whole original transcript is still in the store."""

from __future__ import annotations

import json

from paragents import events as ev
from paragents.agent.tokens import estimate_messages_tokens
from paragents.llm.replay import ScriptedResponse
from paragents.tools.files import ListDir
from paragents.tools.registry import ToolRegistry
from tests.chat_requests import assert_valid_request, turn_requests
from tests.runtime_env import Env

WINDOW = 2000
TURNS = 200
TASK = "TASK: port the frobnicator to async and keep the CLI flags unchanged"


def _call(cid: str) -> dict[str, str]:
    return {"id": cid, "name": "list_dir", "arguments": json.dumps({"path": "."})}


async def test_two_hundred_turns_in_a_small_window(env: Env) -> None:
    (env.project / "frob.py").write_text("print('frob')\n")
    rt = await env.runtime(models={"m": {"context_window": WINDOW}})
    rt.tools = ToolRegistry([ListDir()])  # a small tool set: the specs alone must not fill the window
    view = await rt.lifecycle.new_session("a")
    await rt.memory.remember(view.id, "NOTE-S: tests live in tests/frob")
    await rt.memory.remember(view.id, "NOTE-P: never change the CLI flags", project=True)
    for _ in range(80):
        env.server.add(
            ScriptedResponse.from_message(content="Task: port the frobnicator. Done: steps so far."),
            session="a/compact",
        )

    for i in range(TURNS):
        prompt = TASK if i == 0 else f"step {i}: continue"
        calls = [_call(f"c{i}a"), _call(f"c{i}b")] if i % 7 == 0 else [_call(f"c{i}")]
        env.server.add(
            [
                ScriptedResponse.from_message(tool_calls=calls),
                ScriptedResponse.from_message(content=f"did step {i}"),
            ],
            session="a",
        )
        rt.submit(view.id, prompt)
        await rt.wait_idle(view.id)
        assert view.last_result is not None and view.last_result.status == "completed", view.last_result

    requests = turn_requests(env.server)
    assert len(requests) == 2 * TURNS
    for body in requests:
        assert_valid_request(body)
        assert estimate_messages_tokens(body["messages"], body.get("tools")) <= WINDOW
    compactions = env.sink.of(ev.Compacted, view.id)
    assert len(compactions) >= 10
    assert not [n for n in env.sink.of(ev.Notice, view.id) if "compaction failed" in n.text]

    last = json.dumps(requests[-1]["messages"])
    assert TASK in last and "NOTE-S" in last and "NOTE-P" in last
    assert "step 199: continue" in last

    stored = [m.message for m in await rt.store.messages.load(view.id)]
    prompts = [m["content"] for m in stored if m["role"] == "user"]
    assert prompts == [TASK] + [f"step {i}: continue" for i in range(1, TURNS)]
    assert sum(1 for m in stored if m["role"] == "tool") == TURNS + len(range(0, TURNS, 7))
    await rt.shutdown()
