"""Small newcomer papercuts in the app: /reload, /clear's context %, emoji in session names."""

from __future__ import annotations

import json
from typing import Any

from paragents.llm.replay import ReplayServer
from paragents.llm.replay_script import ScriptedResponse
from paragents.ui.app import ParagentsApp, make_app
from paragents.ui.widgets.session_panel import SessionPanel
from tests.ui.conftest import SIZE, wait_until


async def first_panel(pilot: Any, app: ParagentsApp) -> SessionPanel:
    await wait_until(pilot, lambda: app.ready and len(app.panels) == 1, "the first session")
    return next(iter(app.panels.values()))


async def type_line(pilot: Any, panel: SessionPanel, line: str) -> None:
    panel.prompt_box.input.focus()
    panel.prompt_box.input.value = line
    await pilot.press("enter")


def notices(app: ParagentsApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


def title(panel: SessionPanel) -> str:
    return panel.title_text().plain


async def test_reload_applies_the_file_and_says_what_changed(make_runtime: Any) -> None:
    runtime = await make_runtime()
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        panel = await first_panel(pilot, app)
        assert runtime.config.max_parallel_turns == 4 and panel.context_window == 8192
        config = runtime.project_dir / "runtime_config.json"
        config.write_text(json.dumps({"max_parallel_turns": 2, "models": {"m": {"context_window": 1000}}}))
        await type_line(pilot, panel, "/reload")
        await wait_until(pilot, lambda: any("Reloaded" in n for n in notices(app)), "the reload notice")
        notice = next(n for n in notices(app) if "Reloaded" in n)
        assert str(config) in notice and "max_parallel_turns: 4 → 2" in notice
        assert runtime.config.max_parallel_turns == 2 and runtime.scheduler.max_parallel == 2
        assert runtime.config.model == "m"  # the command line's --model stays on top
        assert panel.context_window == 1000 and "ctx 0%" in title(panel)
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
        await wait_until(pilot, lambda: panel.state.value == "idle", "the turn to end")
        await type_line(pilot, panel, "/clear")
        await wait_until(pilot, lambda: "ctx 0%" in title(panel), "ctx 0% after /clear: " + title(panel))
        record = await runtime.store.get_session(panel.session_id)
        assert record.last_prompt_tokens == 0  # a restart shows 0 % too
        await app.shutdown_runtime()


async def test_session_names_may_contain_emoji(make_runtime: Any) -> None:
    runtime = await make_runtime()
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        panel = await first_panel(pilot, app)
        await type_line(pilot, panel, "/rename 🚀api")
        await wait_until(pilot, lambda: panel.name_ == "🚀api", "the emoji name")
        assert "🚀api" in title(panel)
        assert (await runtime.find_session("🚀api")) is not None
        await type_line(pilot, panel, "/rename a/b")
        await wait_until(pilot, lambda: any("bad session name" in n for n in notices(app)), "the error")
        assert panel.name_ == "🚀api"
        await app.shutdown_runtime()
