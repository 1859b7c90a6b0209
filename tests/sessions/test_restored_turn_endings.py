"""A restored transcript says how past turns ended when they did not complete: failed (with the
error), cancelled, interrupted by a crash; each right after that turn's last message."""

from __future__ import annotations

import asyncio

from paragents.llm.replay import ScriptedResponse
from paragents.models import user_message
from tests.runtime_env import Env
from tests.scripted import gated


async def test_restored_notes_say_failed_cancelled_and_interrupted_after_their_turns(env: Env) -> None:
    rt = await env.runtime()
    view = await rt.new_session("a")
    env.server.add(ScriptedResponse.from_message("fine"), session="a")
    rt.submit(view.id, "one")  # completes: no note
    await rt.wait_idle(view.id)
    rt.submit(view.id, "two")  # nothing scripted: the endpoint answers an error, the turn fails
    await rt.wait_idle(view.id)
    assert view.last_result is not None and view.last_result.status == "failed"
    gate = asyncio.Event()
    env.server.add(gated("a long answer", gate, at=2), session="a")
    rt.submit(view.id, "three")
    await env.sink.wait_for(lambda: bool(view.messages) and view.state.value == "running")
    rt.cancel(view.id)
    await rt.wait_idle(view.id)
    gate.set()
    # a turn a crashed process left running (another pid, gone): interrupted at the next start
    turn = await rt.store.turns.start(view.id, "four", pid=2**22 + 12345)  # above pid_max: no such process
    await rt.store.messages.append(view.id, user_message("four"), turn_id=turn)
    await rt.shutdown()

    again = await env.runtime()
    (restored,) = await again.restore()
    prompts = [i for i, m in enumerate(restored.messages) if m.get("role") == "user"]
    texts = {text: (n, level) for n, text, level in restored.history_notes}
    failed = next(t for t in texts if t.startswith("Turn failed: "))
    assert texts[failed][1] == "error" and prompts[1] < texts[failed][0] <= prompts[2]
    assert texts["Turn cancelled."] == (prompts[3], "warning")
    interrupted = "Turn interrupted: paragents stopped before it finished."
    assert texts[interrupted] == (len(restored.messages), "warning")
    assert len(restored.history_notes) == 3  # the completed turn says nothing
    await again.shutdown()
