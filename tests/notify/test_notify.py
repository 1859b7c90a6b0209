"""Notifications: golden escape bytes per terminal, tmux/screen passthrough, webhook POSTs caught by a
loopback server (control characters stripped, retried after a 500), notify.command, and the
notifier's digest, escalation and mute with a fake clock."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from paragents import events as ev
from paragents.config import NotifySettings, RuntimeConfig
from paragents.llm.replay import ReplayServer, ScriptedResponse
from paragents.models import SessionState, ToolCall
from paragents.notify import Notifier, choose_method, clean, notification_bytes
from paragents.notify.outbound import post_webhook, run_command, webhook_body

E, B, ST = "\x1b", "\x07", "\x1b\\"


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"KITTY_WINDOW_ID": "1"}, f"{E}]99;i=1:d=0;paragents{ST}{E}]99;i=1:d=1:p=body;api · f2{ST}{B}"),
        ({"TERM": "xterm-kitty"}, f"{E}]99;i=1:d=0;paragents{ST}{E}]99;i=1:d=1:p=body;api · f2{ST}{B}"),
        ({"WEZTERM_PANE": "0"}, f"{E}]9;paragents: api · f2{B}{B}"),
        ({"TERM_PROGRAM": "iTerm.app"}, f"{E}]9;paragents: api · f2{B}{B}"),
        ({"VTE_VERSION": "7200"}, f"{E}]777;notify;paragents;api · f2{B}{B}"),
        ({"TERM": "xterm-256color"}, B),
        ({}, B),
    ],
)
def test_golden_bytes_per_terminal(env: dict[str, str], expected: str) -> None:
    assert notification_bytes("paragents", "api · f2", env) == expected


def test_tmux_wraps_in_dcs_passthrough_with_escs_doubled_and_a_bel_outside() -> None:
    env = {"TMUX": "/tmp/tmux-0/default,1,0", "TERM_PROGRAM": "WezTerm"}
    assert notification_bytes("paragents", "api", env) == f"{E}Ptmux;{E}{E}]9;paragents: api{B}{ST}{B}"
    kitty = {"TMUX": "x", "KITTY_WINDOW_ID": "3"}
    wrapped = notification_bytes("p", "b", kitty)
    assert wrapped.startswith(f"{E}Ptmux;{E}{E}]99;") and wrapped.endswith(f"{E}{E}\\{ST}{B}")


def test_screen_passthrough_and_method_override_and_off() -> None:
    assert notification_bytes("p", "b", {"STY": "1.pts"}, "osc9") == f"{E}P{E}]9;p: b{B}{ST}{B}"
    assert notification_bytes("p", "b", {"KITTY_WINDOW_ID": "1"}, "bel") == B
    assert notification_bytes("p", "b", {}, "off") == ""
    assert choose_method({"VTE_VERSION": "1"}, "osc9") == "osc9"


def test_control_characters_never_reach_the_sequence() -> None:
    hostile = f"rm{E}]2;pwned{B} -rf\x9b31m build/\nnext"
    out = notification_bytes("paragents", hostile, {"WEZTERM_PANE": "1"})
    assert out == f"{E}]9;paragents: rm]2;pwned -rf31m build/ next{B}{B}"
    assert clean("a\x00b\x7fc\x85d") == "abcd"


async def test_webhook_posts_are_caught_with_control_characters_stripped_and_retried_after_500() -> None:
    async with ReplayServer() as server:
        server.add(ScriptedResponse(status=500, reads=['{"error": "busy"}']))
        server.add(ScriptedResponse(status=200, headers={"Content-Type": "text/plain"}, reads=["ok"]))
        url = f"{server.base_url.removesuffix('/v1')}/hooks/paragents-alerts"
        body = webhook_body(
            url, "paragents", f"api{E}[31m · approve `rm -rf build/`{B} · f2", "api\x00", "needs"
        )
        waits: list[float] = []

        async def no_wait(delay: float) -> None:
            waits.append(delay)

        assert await post_webhook(url, body, sleep=no_wait) is None
        assert len(server.requests) == 2 and waits == [0.5]
        got = server.requests[1].body_json
        assert got["text"] == got["content"] == "paragents: api[31m · approve `rm -rf build/` · f2"
        assert got["message"] == "api[31m · approve `rm -rf build/` · f2" and got["session"] == "api"
        assert got["topic"] == "paragents-alerts" and got["kind"] == "needs"
        assert all(E not in str(v) and B not in str(v) for v in got.values())


async def test_webhook_that_keeps_failing_is_reported_not_lost() -> None:
    async with ReplayServer() as server:  # nothing scripted: every POST answers 500
        url = server.base_url + "/hook"

        async def no_wait(delay: float) -> None:
            return None

        why = await post_webhook(url, {"text": "x"}, delays=(0.1, 0.2), sleep=no_wait)
        assert why is not None and "HTTP 500" in why and len(server.requests) == 3


async def test_notify_command_runs_argv_without_a_shell_and_a_missing_one_is_reported(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    script = f"import sys; open({str(out)!r}, 'w').write(sys.argv[1])"
    assert await run_command([sys.executable, "-c", script], "api · $(touch pwned) · f2") is None
    assert out.read_text() == "api · $(touch pwned) · f2" and not (tmp_path / "pwned").exists()
    why = await run_command(["/nonexistent/notifier"], "x")
    assert why is not None and "could not run" in why


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def ask(sid: str, summary: str = "rm -rf build/") -> ev.PermissionRequested:
    future: asyncio.Future = asyncio.get_running_loop().create_future()
    return ev.PermissionRequested(sid, "r1", ToolCall("c", "run_command", "{}"), summary, "ask", (), future)


def make(clock: FakeClock, visible: str | None = None, **settings: object) -> tuple[Notifier, list[str]]:
    written: list[str] = []
    notifier = Notifier(
        NotifySettings(enabled=True, **settings),
        env={"WEZTERM_PANE": "1"},
        write=written.append,
        is_visible=lambda sid: sid == visible,
        names=lambda sid: {"s1": "api", "s2": "web", "s3": "docs"}[sid],
        clock=clock,
    )
    return notifier, written


async def test_background_approval_notifies_once_and_the_visible_session_never() -> None:
    clock = FakeClock()
    notifier, written = make(clock, visible="s2")
    notifier.observe(ask("s1"))
    notifier.observe(ask("s1", "second ask"))  # already needs you: not announced again
    notifier.observe(ask("s2"))  # the session on screen
    assert notifier.tick() == []  # within the digest window
    clock.now += 1
    sent = notifier.tick()
    assert [n.text for n in sent] == ["api · approve `rm -rf build/` (run_command) · f2"]
    assert written == [
        f"{E}[22;0t",  # the terminal's own title is pushed before the first change
        f"{E}]2;paragents · 1 needs you{B}",  # the title follows the count at once
        f"{E}]2;paragents · 2 need you{B}",
        f"{E}]9;paragents: api · approve `rm -rf build/` (run_command) · f2{B}{B}",
    ]
    notifier.observe(ev.SessionStateChanged("s1", SessionState.RUNNING))  # answered
    assert written[-1] == f"{E}]2;paragents · 1 needs you{B}" and len(written) == 5


async def test_several_at_once_make_one_digest_and_one_escalation_follows() -> None:
    clock = FakeClock()
    notifier, _ = make(clock, escalate_after=300)
    notifier.observe(ask("s1"))
    notifier.observe(
        ev.BudgetPaused(
            "s2",
            "session",
            "usd",
            "$2.00",
            "$2.00",
            "session budget: spent $2.00 of $2.00",
            asyncio.get_running_loop().create_future(),
        )
    )
    clock.now += 1
    sent = notifier.tick()
    assert [n.text for n in sent] == ["paragents · 2 need you: api, web · f2"]
    notifier.observe(ev.SessionStateChanged("s2", SessionState.RUNNING))  # web was raised meanwhile
    clock.now += 298
    assert notifier.tick() == []
    clock.now += 5
    reminders = notifier.tick()
    assert [n.kind for n in reminders] == ["reminder"] and reminders[0].session_id == "s1"
    assert "still waiting (5 min)" in reminders[0].text
    clock.now += 3600
    assert notifier.tick() == []  # one reminder only


def test_an_unreachable_lane_needs_you_until_it_answers() -> None:
    clock = FakeClock()
    notifier, written = make(clock)
    notifier.observe(ev.LanePlaceChanged("s1", "api", "container paragents-x-api", "ready"))
    assert notifier.blocked == {}
    notifier.observe(ev.LanePlaceChanged("s1", "api", "container paragents-x-api", "unreachable", "gone"))
    notifier.observe(ev.SessionStateChanged("s1", SessionState.PAUSED))  # still needs you
    clock.now += 1
    [sent] = notifier.tick()
    assert sent.text == "api · lane api unreachable: paused until it answers · f2"
    notifier.observe(ev.SessionStateChanged("s1", SessionState.RUNNING))  # it answers: resumed
    assert notifier.blocked == {} and written[-1].endswith(f"]2;paragents{B}")


async def test_mute_finished_failed_and_webhook_from_the_notifier() -> None:
    async with ReplayServer() as server:
        server.add(ScriptedResponse(status=200, headers={"Content-Type": "text/plain"}, reads=["ok"]))
        clock = FakeClock()
        notifier, _ = make(clock, webhook=server.base_url + "/hook")
        notifier.mute("s3")
        notifier.observe(ev.TurnFinished("s3", "completed"))
        notifier.observe(ev.TurnFinished("s1", "failed", "endpoint\x1b[2J down"))
        clock.now += 1
        sent = notifier.tick()
        assert [n.text for n in sent] == ["api · failed: endpoint[2J down"]
        await notifier.drain()
        assert notifier.failures == []
        assert server.requests[0].body_json["message"] == "api · failed: endpoint[2J down"


def test_notify_true_is_short_for_enabled() -> None:
    assert RuntimeConfig(notify=True).notify.enabled is True
    assert RuntimeConfig().notify.escalate_after == 300


async def test_a_question_needs_you_until_a_prompt_is_sent_and_is_not_also_finished() -> None:
    clock = FakeClock()
    notifier, _ = make(clock)
    notifier.observe(ev.SessionStateChanged("s1", SessionState.IDLE))
    notifier.observe(ev.QuestionAsked("s1", "Shall I push\x1b[2J the branch?"))
    notifier.observe(ev.TurnFinished("s1", "completed"))
    clock.now += 1
    assert [(n.kind, n.text) for n in notifier.tick()] == [
        ("needs", "api · question: Shall I push[2J the branch? · f2")
    ]
    assert notifier.title() == "paragents · 1 needs you"
    notifier.observe(ev.SessionStateChanged("s1", SessionState.RUNNING))  # the user sent a prompt
    assert notifier.title() == "paragents" and not notifier.blocked


async def test_the_title_is_written_without_notify_enabled_and_restored_at_exit() -> None:
    clock = FakeClock()
    written: list[str] = []
    notifier = Notifier(
        NotifySettings(enabled=False), env={}, write=written.append, names=lambda sid: "api", clock=clock
    )
    notifier.observe(ask("s1"))
    clock.now += 1
    notifier.tick()
    assert written == [f"{E}[22;0t", f"{E}]2;paragents · 1 needs you{B}"]  # no notification bytes
    notifier.observe(ev.SessionStateChanged("s1", SessionState.RUNNING))
    assert written[-1] == f"{E}]2;paragents{B}"
    notifier.restore_title()
    assert written[-1] == f"{E}[23;0t"
    notifier.restore_title()
    assert written.count(f"{E}[23;0t") == 1
    off: list[str] = []
    muted = Notifier(NotifySettings(method="off"), env={}, write=off.append, clock=clock)
    muted.observe(ask("s1"))
    muted.restore_title()
    assert off == []
