"""First-run setup: test connection against a real loopback server, save a 0600 config, reload it."""

from __future__ import annotations

import json
import socket
import stat
from functools import partial
from typing import Any

from textual.widgets import Button, Checkbox, Input, Select, Static

from paragents import paths
from paragents.llm.replay import ReplayServer
from paragents.ui.app import make_app
from paragents.ui.screens.setup import SetupScreen
from tests.ui.conftest import SIZE, wait_until


def _mode_changed(runtime: Any, sid: str | None, before: str) -> bool:
    return bool(runtime.sessions[sid].mode != before)


def status_text(app: Any) -> str:
    return str(app.screen.query_one("#status", Static).render())


async def test_setup_tests_the_connection_saves_0600_and_reloads(
    make_runtime: Any, replay: ReplayServer
) -> None:
    runtime = await make_runtime()
    app = make_app(runtime, first_run=True)
    key = "sk-setup-SECRET-9876"
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen), "the setup screen")
        screen = app.screen
        screen.query_one("#base-url", Input).value = replay.base_url
        screen.query_one("#model-input", Input).value = "m"
        screen.query_one("#api-key", Input).value = key
        await pilot.click("#test")
        await wait_until(pilot, lambda: status_text(app).startswith(("✓", "✗")), "the connection result")
        assert status_text(app).startswith("✓"), status_text(app)
        assert key not in app.export_screenshot()
        await pilot.click("#save")
        await wait_until(pilot, lambda: not isinstance(app.screen, SetupScreen), "the setup screen to close")
        saved = paths.user_runtime_config_path()
        assert stat.S_IMODE(saved.stat().st_mode) == 0o600
        data = json.loads(saved.read_text())
        assert data["base_url"] == replay.base_url and data["model"] == "m" and data["api_key"] == key
        await wait_until(pilot, lambda: runtime.config.base_url == replay.base_url, "the config reload")
        await app.shutdown_runtime()


async def test_setup_says_plainly_when_the_server_is_down(make_runtime: Any) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    runtime = await make_runtime()
    app = make_app(runtime, first_run=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen), "the setup screen")
        app.screen.query_one("#base-url", Input).value = f"http://127.0.0.1:{port}/v1"
        await pilot.click("#test")
        await wait_until(pilot, lambda: status_text(app).startswith(("✓", "✗")), "the connection result")
        text = status_text(app)
        assert text.startswith("✗") and str(port) in text
        app.screen.query_one("#base-url", Input).value = "not-a-url"
        app.screen.query_one("#test", Button).press()
        await wait_until(
            pilot, lambda: "http(s) URL" in status_text(app), "the URL error: " + status_text(app)
        )
        await app.shutdown_runtime()


async def test_shift_tab_cycles_the_permission_mode_of_the_focused_session(make_runtime: Any) -> None:
    runtime = await make_runtime()
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: bool(runtime.sessions) and app.active_sid is not None, "a session")
        sid = app.active_sid
        seen: list[str] = []
        for _ in range(3):
            before = runtime.sessions[sid].mode
            await pilot.press("shift+tab")
            await wait_until(pilot, partial(_mode_changed, runtime, sid, before), "the mode to change")
            seen.append(runtime.sessions[sid].mode)
        assert seen == ["acceptEdits", "plan", "default"]
        record = await runtime.store.sessions.get(sid)
        assert record.mode == "default"
        await app.shutdown_runtime()


async def test_true_first_run_without_a_model_opens_setup_then_the_first_session(
    tmp_path: Any, replay: ReplayServer
) -> None:
    from paragents.sessions import Runtime

    project = tmp_path / "fresh"
    project.mkdir()
    runtime = await Runtime.create(project, db_path=tmp_path / "fresh.db")
    assert runtime.config.model == ""
    app = make_app(runtime, first_run=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(
            pilot, lambda: isinstance(app.screen, SetupScreen) and app.ready, "setup and startup"
        )
        assert app.panels == {}
        assert app.focused is app.screen.query_one("#base-url", Input)
        app.screen.query_one("#base-url", Input).value = replay.base_url
        app.screen.query_one("#model-input", Input).value = "m"
        await pilot.click("#save")
        await wait_until(pilot, lambda: len(app.panels) == 1, "the first session after setup")
        view = next(iter(runtime.sessions.values()))
        assert view.model == "m"
        await app.shutdown_runtime()


async def fresh_runtime(tmp_path: Any) -> Any:
    """A runtime of a project with no config file at all (model "")."""
    from paragents.sessions import Runtime

    project = tmp_path / "fresh"
    project.mkdir(exist_ok=True)
    return await Runtime.create(project, db_path=tmp_path / "fresh.db")


async def test_setup_refuses_to_save_without_a_model(tmp_path: Any, replay: ReplayServer) -> None:
    runtime = await fresh_runtime(tmp_path)
    app = make_app(runtime, first_run=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen) and app.ready, "setup")
        app.screen.query_one("#base-url", Input).value = replay.base_url
        await pilot.click("#save")
        await wait_until(pilot, lambda: "Choose a model" in status_text(app), "the missing-model error")
        assert isinstance(app.screen, SetupScreen)
        assert not paths.user_runtime_config_path().exists()
        await app.shutdown_runtime()


async def test_a_single_listed_model_is_preselected_and_saved(tmp_path: Any, replay: ReplayServer) -> None:
    runtime = await fresh_runtime(tmp_path)
    app = make_app(runtime, first_run=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen) and app.ready, "setup")
        app.screen.query_one("#base-url", Input).value = replay.base_url
        await pilot.click("#test")
        await wait_until(pilot, lambda: status_text(app).startswith(("✓", "✗")), "the connection result")
        assert app.screen.query_one("#model-select", Select).value == "m"
        await pilot.click("#save")
        await wait_until(pilot, lambda: len(app.panels) == 1, "the first session after setup")
        assert json.loads(paths.user_runtime_config_path().read_text())["model"] == "m"
        await app.shutdown_runtime()


async def test_the_tools_switch_saves_tools_false_for_the_model(tmp_path: Any, replay: ReplayServer) -> None:
    runtime = await fresh_runtime(tmp_path)
    app = make_app(runtime, first_run=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen) and app.ready, "setup")
        app.screen.query_one("#base-url", Input).value = replay.base_url
        app.screen.query_one("#model-input", Input).value = "m"
        tools = app.screen.query_one("#tools", Checkbox)
        assert tools.value is True
        tools.value = False
        await pilot.click("#save")
        await wait_until(pilot, lambda: len(app.panels) == 1, "the first session after setup")
        data = json.loads(paths.user_runtime_config_path().read_text())
        assert data["models"]["m"]["tools"] is False
        assert runtime.config.model_settings("m").tools is False
        await app.shutdown_runtime()


async def test_escape_on_first_run_setup_says_how_to_open_setup_again(tmp_path: Any) -> None:
    runtime = await fresh_runtime(tmp_path)
    app = make_app(runtime, first_run=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen) and app.ready, "setup")
        await pilot.press("escape")
        await wait_until(pilot, lambda: bool(app.query("#empty-hint")), "the hint on the empty screen")
        hint = str(app.query_one("#empty-hint", Static).render())
        assert "/setup" in hint and "ctrl+p" in hint
        assert "/setup" in app.export_screenshot()
        await app.shutdown_runtime()


async def test_with_no_model_the_empty_screen_takes_commands_and_refuses_prompts(tmp_path: Any) -> None:
    """Without a panel there is no prompt box: the empty screen's command line takes the commands
    the hints name (a prompt is refused with a hint, a bad command says why)."""
    runtime = await fresh_runtime(tmp_path)
    app = make_app(runtime, first_run=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen) and app.ready, "setup")
        await pilot.press("escape")
        await wait_until(pilot, lambda: bool(app.query("#empty-command")), "the command line")
        line = app.query_one("#empty-command", Input)
        assert line.has_focus
        await pilot.press(*"say hi", "enter")
        await pilot.pause()
        assert "Open a session first" in str(app.query_one("#empty-error", Static).render())
        assert not app.panels and not isinstance(app.screen, SetupScreen)
        line.value = ""
        await pilot.press(*"/new --bogus", "enter")
        await pilot.pause()
        assert "--bogus" in str(app.query_one("#empty-error", Static).render())
        line.value = ""
        await pilot.press(*"/setup", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen), "the setup screen")
        await app.shutdown_runtime()


async def click_again(pilot: Any, screen: Any, selector: str) -> None:
    """Click a button clicked a moment ago: a Textual button ignores clicks while it still shows
    the last one (its ``-active`` effect, 0.2 s), which a fast machine reaches before it ends."""
    button = screen.query_one(selector)
    await wait_until(pilot, lambda: not button.has_class("-active"), f"{selector} to take clicks again")
    await pilot.click(selector)


async def _setup_with(app: Any, pilot: Any, replay: ReplayServer, model: str) -> Any:
    await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen), "the setup screen")
    screen = app.screen
    screen.query_one("#base-url", Input).value = replay.base_url
    screen.query_one("#model-input", Input).value = model
    await pilot.click("#test")
    await wait_until(pilot, lambda: status_text(app).startswith(("✓", "✗")), "the connection result")
    return screen


async def test_setup_reads_the_context_window_llama_cpp_runs_with_from_props(
    make_runtime: Any, replay: ReplayServer
) -> None:
    replay.props = {"default_generation_settings": {"n_ctx": 32768}, "total_slots": 1}
    runtime = await make_runtime()
    app = make_app(runtime, first_run=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _setup_with(app, pilot, replay, "m")
        assert "Context window: 32768 tokens (from the server's /props (n_ctx))" in status_text(app)
        assert screen.query_one("#context-window", Input).value == "32768"
        await pilot.click("#save")
        await wait_until(pilot, lambda: not isinstance(app.screen, SetupScreen), "saved")
        data = json.loads(paths.user_runtime_config_path().read_text())
        assert data["models"]["m"]["context_window"] == 32768
        await wait_until(pilot, lambda: runtime.config.model_settings("m").context_window == 32768, "reload")
        await app.shutdown_runtime()


async def test_setup_reads_vllms_max_model_len_and_asks_when_the_server_does_not_say(
    make_runtime: Any, replay: ReplayServer
) -> None:
    from paragents.llm.replay_script import ScriptedResponse

    listed = {"object": "list", "data": [{"id": "m", "object": "model", "max_model_len": 131072}]}
    for _ in range(3):  # the test lists the models, then reads their windows
        replay.add_models_response(
            ScriptedResponse(headers={"Content-Type": "application/json"}, reads=[json.dumps(listed)])
        )
    runtime = await make_runtime()
    app = make_app(runtime, first_run=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _setup_with(app, pilot, replay, "m")
        assert "Context window: 131072 tokens (from the server's /models)" in status_text(app)
        assert screen.query_one("#context-window", Input).value == "131072"
        # a server that says nothing (no context field, no /props): setup asks for it
        await click_again(pilot, screen, "#test")
        await wait_until(pilot, lambda: "does not say" in status_text(app), "the question")
        assert "type it below" in status_text(app)
        field = screen.query_one("#context-window", Input)
        field.value = ""
        await pilot.click("#save")
        await wait_until(pilot, lambda: "Type the model's context window" in status_text(app), "refused")
        assert isinstance(app.screen, SetupScreen)
        field.value = "16384"
        await click_again(pilot, screen, "#save")
        await wait_until(pilot, lambda: not isinstance(app.screen, SetupScreen), "saved")
        data = json.loads(paths.user_runtime_config_path().read_text())
        assert data["models"]["m"]["context_window"] == 16384
        await app.shutdown_runtime()


async def test_save_without_a_test_reads_the_context_window_from_the_server_first(
    make_runtime: Any, replay: ReplayServer
) -> None:
    """Saved without Test connection and with the field as it started (8,192 by default), the window
    the server says is saved, not the default; a window the user typed is kept as typed."""
    replay.props = {"default_generation_settings": {"n_ctx": 32768}, "total_slots": 1}
    runtime = await make_runtime()
    app = make_app(runtime, first_run=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen), "the setup screen")
        screen = app.screen
        assert screen.query_one("#context-window", Input).value == "8192"
        screen.query_one("#base-url", Input).value = replay.base_url
        screen.query_one("#model-input", Input).value = "m"
        await pilot.click("#save")
        await wait_until(pilot, lambda: not isinstance(app.screen, SetupScreen), "saved")
        data = json.loads(paths.user_runtime_config_path().read_text())
        assert data["models"]["m"]["context_window"] == 32768
        await pilot.press(*"/setup", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen), "setup again")
        screen = app.screen
        screen.query_one("#context-window", Input).value = "4096"  # typed: the user's word wins
        await pilot.click("#save")
        await wait_until(pilot, lambda: not isinstance(app.screen, SetupScreen), "saved again")
        data = json.loads(paths.user_runtime_config_path().read_text())
        assert data["models"]["m"]["context_window"] == 4096
        await app.shutdown_runtime()


async def test_the_context_window_refuses_what_is_not_digits_as_typed_and_a_window_too_small(
    make_runtime: Any, replay: ReplayServer
) -> None:
    """Fresh-user finding: typing ``-5[b]`` left "5" in the field without a word and Save wrote 5.
    Each refused key now says why in the status line, and Save refuses a window under 256 tokens."""
    runtime = await make_runtime()
    app = make_app(runtime, first_run=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen), "the setup screen")
        screen = app.screen
        screen.query_one("#base-url", Input).value = replay.base_url
        screen.query_one("#model-input", Input).value = "m"
        field = screen.query_one("#context-window", Input)
        field.value = ""
        field.focus()
        await pilot.press("-")
        await wait_until(pilot, lambda: "only digits" in status_text(app), "the refusal said")
        assert field.value == "" and "at least 256" in status_text(app)
        await pilot.press("5", "[", "b", "]")
        await pilot.pause()
        assert field.value == "5" and "only digits" in status_text(app)
        await pilot.click("#save")
        await wait_until(pilot, lambda: "(not '5')" in status_text(app), "the too-small window refused")
        assert isinstance(app.screen, SetupScreen) and not paths.user_runtime_config_path().exists()
        assert field.has_class("-invalid")
        await pilot.press("end", "1", "2")  # the field took the focus back (its text selected)
        await click_again(pilot, screen, "#save")
        await wait_until(pilot, lambda: not isinstance(app.screen, SetupScreen), "saved")
        data = json.loads(paths.user_runtime_config_path().read_text())
        assert data["models"]["m"]["context_window"] == 512
        await app.shutdown_runtime()
