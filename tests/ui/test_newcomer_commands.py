"""Small newcomer papercuts in the app: /reload, /clear's context %, emoji in session names, the wait
for a first token and the empty-reply hint."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from paragents.llm.replay import ReplayServer
from paragents.llm.replay_script import ScriptedResponse
from paragents.ui.app import make_app
from paragents.ui.widgets.session_panel import SessionPanel
from paragents.ui.widgets.transcript import TextEntry
from tests.typing_keys import type_line
from tests.ui.conftest import SIZE, wait_until
from tests.ui.helpers import first_panel, notices


def title(panel: SessionPanel) -> str:
    return panel.title_text().plain


async def test_reload_applies_the_file_and_says_what_changed(make_runtime: Any) -> None:
    runtime = await make_runtime()
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        panel = await first_panel(pilot, app)
        assert runtime.config.max_parallel_turns == 4 and panel.view.context_window == 8192
        config = runtime.project_dir / "runtime_config.json"
        config.write_text(json.dumps({"max_parallel_turns": 2, "models": {"m": {"context_window": 1000}}}))
        await type_line(pilot, panel, "/reload")
        await wait_until(pilot, lambda: any("Reloaded" in n for n in notices(app)), "the reload notice")
        notice = next(n for n in notices(app) if "Reloaded" in n)
        assert str(config) in notice and "max_parallel_turns: 4 → 2" in notice
        assert runtime.config.max_parallel_turns == 2 and runtime.scheduler.max_parallel == 2
        assert runtime.config.model == "m"  # the command line's --model stays on top
        assert panel.view.context_window == 1000 and "ctx 0%" in title(panel)
        await app.shutdown_runtime()


async def test_reload_of_a_bad_file_names_file_and_field_and_keeps_the_config(make_runtime: Any) -> None:
    runtime = await make_runtime()
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        panel = await first_panel(pilot, app)
        config = runtime.project_dir / "runtime_config.json"
        config.write_text(json.dumps({"max_parallel_turns": "many"}))
        await type_line(pilot, panel, "/reload")
        await wait_until(pilot, lambda: any("not reloaded" in n for n in notices(app)), "the error")
        error = next(n for n in notices(app) if "not reloaded" in n)
        assert str(config) in error and "max_parallel_turns" in error
        assert runtime.config.max_parallel_turns == 4
        await app.shutdown_runtime()


async def test_clear_resets_the_context_percentage(make_runtime: Any, replay: ReplayServer) -> None:
    usage = {"prompt_tokens": 4000, "completion_tokens": 10, "total_tokens": 4010}
    replay.add(ScriptedResponse.from_message(content="hello", usage=usage))
    runtime = await make_runtime()
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        panel = await first_panel(pilot, app)
        await type_line(pilot, panel, "hi")
        await wait_until(pilot, lambda: "ctx 0%" not in title(panel), "a context % after the turn")
        await wait_until(pilot, lambda: panel.view.state.value == "idle", "the turn to end")
        await type_line(pilot, panel, "/clear")
        await wait_until(pilot, lambda: "ctx 0%" in title(panel), "ctx 0% after /clear: " + title(panel))
        record = await runtime.store.sessions.get(panel.session_id)
        assert record.last_prompt_tokens == 0  # a restart shows 0 % too
        texts = [getattr(e, "text", getattr(e, "content", None)) for e in panel.transcript.records]
        assert texts == ["New conversation (the previous one stays in the history)."]  # emptied, said once
        await app.shutdown_runtime()


async def test_session_names_may_contain_emoji(make_runtime: Any) -> None:
    runtime = await make_runtime()
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        panel = await first_panel(pilot, app)
        await type_line(pilot, panel, "/rename 🚀api")
        await wait_until(pilot, lambda: panel.view.name == "🚀api", "the emoji name")
        assert "🚀api" in title(panel)
        assert (await runtime.lifecycle.find_session("🚀api")) is not None
        await type_line(pilot, panel, "/rename a/b")
        await wait_until(pilot, lambda: any("bad session name" in n for n in notices(app)), "the error")
        assert panel.view.name == "🚀api"
        await app.shutdown_runtime()


async def test_the_title_counts_the_wait_for_the_first_token(make_runtime: Any, replay: ReplayServer) -> None:
    gate = asyncio.Event()

    async def before(i: int) -> None:
        if i == 0:
            await gate.wait()

    slow = ScriptedResponse.from_message("late but here", chunk_size=4)
    slow.before_read = before
    replay.add(slow)
    runtime = await make_runtime()
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        panel = await first_panel(pilot, app)
        await type_line(pilot, panel, "hi")
        await wait_until(pilot, lambda: panel.awaiting_since is not None, "the request to be sent")
        since = panel.awaiting_since
        assert since is not None
        panel.clock = lambda: since + 12.4
        await wait_until(
            pilot, lambda: "waiting for first token, 12 s" in title(panel), "the wait count: " + title(panel)
        )
        panel.clock = lambda: since + 13.1
        await wait_until(pilot, lambda: "first token, 13 s" in title(panel), "the count to update")
        gate.set()
        await wait_until(pilot, lambda: panel.awaiting_since is None, "the first token")
        assert "waiting for first token" not in title(panel)
        await app.shutdown_runtime()


async def test_an_empty_reply_to_a_request_with_tools_says_what_to_try(
    make_runtime: Any, replay: ReplayServer
) -> None:
    replay.add(ScriptedResponse.from_message(content=""))
    runtime = await make_runtime()
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        panel = await first_panel(pilot, app)
        await type_line(pilot, panel, "hi")

        def hint() -> str:
            found = [e.text for e in panel.transcript.records if isinstance(e, TextEntry)]
            return next((t for t in found if "empty reply" in t), "")

        await wait_until(pilot, lambda: bool(hint()), "the empty-reply notice")
        assert "tools" in hint() and "/setup" in hint() and "/reload" in hint()
        await app.shutdown_runtime()
