"""An external agent's own commands, modes and models (paragents.acp.controls,
paragents.sessions.acp_controls), against the fake agent as a subprocess: its commands reach the
session's view as plain, capped text; ``/mode`` and ``/model`` switch the agent's modes and model, and
an agent that offers none (or answers "method not found") gets one note, never an error."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable

from paragents import events as ev
from paragents.acp.controls import MAX_COMMANDS, MAX_TEXT
from paragents.sessions import Runtime
from paragents.ui.core.agent_commands import agent_command, agent_matches, agent_prompt
from paragents.ui.core.commands import SlashCommand, parse_command
from tests.acp.conftest import AcpEnv
from tests.patience import HANG_GUARD_S


async def until(condition: Callable[[], bool], what: str, timeout: float = HANG_GUARD_S) -> None:
    """A bounded wait on ``condition`` (the fake agent takes seconds to start on a busy machine)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.01)


def notices(aenv: AcpEnv, sid: str) -> list[str]:
    return [e.text for e in aenv.sink.of(ev.Notice, sid)]


async def started(aenv: AcpEnv, rt: Runtime, name: str = "q") -> str:
    view = await aenv.session(rt, name)
    await until(lambda: any("is ready" in n for n in notices(aenv, view.id)), "the agent to start")
    return view.id


async def test_the_agents_commands_reach_its_view_as_plain_capped_text(aenv: AcpEnv) -> None:
    many = [[f"c{i}", "x" * 500] for i in range(MAX_COMMANDS + 20)]
    pairs = [["init", "make AGENTS.md"], ["[b]x[/b]", "[red]boom[/red]"], ["bad\x1bname", "no"], *many]
    rt = await aenv.runtime(FAKE_ACP_COMMANDS=json.dumps(pairs))
    sid = await started(aenv, rt)
    other = await rt.new_session("mine")
    view = rt.sessions[sid]
    await until(lambda: view.agent_controls is not None and bool(view.agent_controls.commands), "commands")
    controls = view.agent_controls
    assert controls is not None and controls.agent == "fake"
    assert controls.commands[:2] == (("init", "make AGENTS.md"), ("[b]x[/b]", "[red]boom[/red]"))
    assert "bad\x1bname" not in dict(controls.commands)
    assert len(controls.commands) == MAX_COMMANDS
    assert max(len(d) for _, d in controls.commands) == MAX_TEXT
    assert rt.sessions[other.id].agent_controls is None
    await rt.shutdown()


async def test_mode_lists_and_switches_the_agents_modes_not_paragents_permission_mode(aenv: AcpEnv) -> None:
    rt = await aenv.runtime(FAKE_ACP_MODES="1")
    sid = await started(aenv, rt)
    view = rt.sessions[sid]
    assert view.agent_controls is not None and view.agent_controls.mode == "Code"
    await rt.agent_mode(sid, None)
    listing = notices(aenv, sid)[-1]
    assert "fake's modes" in listing and " * code (Code)" in listing and "plan (Plan): plans only" in listing
    await rt.agent_mode(sid, "plan")
    assert view.agent_controls.mode == "Plan"
    assert notices(aenv, sid)[-1] in ("agent mode: plan", "fake's mode is now Plan")
    assert view.mode == "default"  # paragents' permission mode did not change
    await rt.agent_mode(sid, "yolo")
    assert "fake has no mode 'yolo'; its modes: ask, code, plan" in notices(aenv, sid)[-1]
    assert not [e for e in aenv.sink.of(ev.Notice, sid) if e.level == "error"]
    await rt.shutdown()


async def test_an_agent_without_modes_gets_one_note(aenv: AcpEnv) -> None:
    rt = await aenv.runtime()
    sid = await started(aenv, rt)
    before = len(notices(aenv, sid))
    await rt.agent_mode(sid, "plan")
    said = notices(aenv, sid)[before:]
    assert len(said) == 1 and said[0].startswith("fake does not offer modes")
    assert "/permissions mode MODE" in said[0]
    assert rt.sessions[sid].mode == "default"
    await rt.shutdown()


async def test_set_mode_method_not_found_is_one_note(aenv: AcpEnv) -> None:
    rt = await aenv.runtime(FAKE_ACP_MODES="broken")
    sid = await started(aenv, rt)
    before = len(notices(aenv, sid))
    await rt.agent_mode(sid, "plan")
    assert notices(aenv, sid)[before:] == ["fake does not support switching modes (session/set_mode)"]
    await rt.agent_mode(sid, "ask")  # known now: not asked again
    assert notices(aenv, sid)[-1].startswith("fake does not offer modes")
    await rt.shutdown()


async def test_model_lists_and_switches_through_the_model_config_option(aenv: AcpEnv) -> None:
    rt = await aenv.runtime(FAKE_ACP_MODELS="1")
    sid = await started(aenv, rt)
    view = rt.sessions[sid]
    assert view.agent_controls is not None and view.agent_controls.model == "Small"
    await rt.agent_model(sid, None)
    listing = notices(aenv, sid)[-1]
    assert " * small (Small)" in listing and "large (Large)" in listing
    assert "Thought level: Low (low, high)" in listing
    await rt.agent_model(sid, "large")
    assert view.agent_controls.model == "Large"
    assert notices(aenv, sid)[-1] == "fake's model is now Large"
    assert view.model == "acp:fake"  # paragents' own model setting is not touched
    await rt.agent_model(sid, "huge")
    assert "fake has no model 'huge'; its models: small, large" in notices(aenv, sid)[-1]
    await rt.shutdown()


async def test_an_agent_without_a_model_option_gets_one_note(aenv: AcpEnv) -> None:
    rt = await aenv.runtime()
    sid = await started(aenv, rt)
    before = len(notices(aenv, sid))
    await rt.agent_model(sid, "large")
    assert notices(aenv, sid)[before:] == ["fake does not offer a choice of model"]
    await rt.shutdown()


def test_agent_commands_are_sent_to_it_and_paragents_names_win() -> None:
    agent = ev.AgentControlsChanged("s", "qwen", (("init", "make AGENTS.md"), ("review", "theirs")))
    assert agent_prompt("/init fast please", agent) == "/init fast please"
    assert agent_prompt("/review the diff", agent) is None  # paragents' /review wins
    assert agent_prompt("//review the diff", agent) == "/review the diff"
    assert agent_prompt("/nope", agent) is None and agent_prompt("/init", None) is None
    assert agent_matches("/in", agent) == [("init", "make AGENTS.md")]
    assert agent_matches("//re", agent) == [("review", "theirs")]
    assert agent_matches("/in", None) == []
    assert agent_command("/mode", agent) == SlashCommand("mode", None)
    assert agent_command("/model  big one", agent) == SlashCommand("model", "big one")
    assert agent_command("/mode plan", None) is None


def test_permissions_mode_sets_paragents_permission_mode() -> None:
    assert parse_command("/permissions mode plan") == SlashCommand("permissions", None, {"mode": "plan"})
    assert parse_command("/permissions") == SlashCommand("permissions")
    assert not isinstance(parse_command("/permissions mode yolo"), SlashCommand)


def test_updates_from_the_agent_change_the_mode_and_model_shown() -> None:
    from acp.schema import (
        ConfigOptionUpdate,
        CurrentModeUpdate,
        SessionConfigOptionSelect,
        SessionConfigSelectOption,
    )

    from paragents.acp.controls import AgentControls

    seen: list[ev.Event] = []
    controls = AgentControls("s", seen.append, "qwen")
    choices = [SessionConfigSelectOption(value="big", name="Big \x1b[31mone")]
    option = SessionConfigOptionSelect(
        id="m", name="Model", category="model", type="select", current_value="big", options=choices
    )
    controls.apply(ConfigOptionUpdate(session_update="config_option_update", config_options=[option]))
    controls.apply(CurrentModeUpdate(session_update="current_mode_update", current_mode_id="plan"))
    controls.apply(CurrentModeUpdate(session_update="current_mode_update", current_mode_id="plan"))
    assert seen == [
        ev.AgentControlsChanged("s", "qwen", (), None, "Big [31mone"),
        ev.AgentControlsChanged("s", "qwen", (), "plan", "Big [31mone"),
    ]
