"""SessionView.apply is the one writer of a session's state: each event sets what it names."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from paragents import events as ev
from paragents.models import SessionState, ToolCall, TurnResult, TurnStatus, Usage
from paragents.sessions import SessionView
from paragents.sessions.names import MAX_NAME, check_name, next_number_name, unique_name
from paragents.sessions.view import SessionError


def make_view() -> SessionView:
    return SessionView(id="s1", name="a", model="m", mode="default", workdir=Path("/tmp"))


def test_state_change_carries_what_a_held_call_waits_on() -> None:
    view = make_view()
    view.apply(ev.SessionStateChanged("s1", SessionState.WAITING, "waiting on b", "b"))
    assert view.state is SessionState.WAITING and view.waiting_on == "b"
    view.apply(ev.SessionStateChanged("s1", SessionState.RUNNING, ""))
    assert view.state is SessionState.RUNNING and view.waiting_on is None


def test_turn_finished_sets_the_last_result() -> None:
    view = make_view()
    result = TurnResult(status=TurnStatus.COMPLETED, usage=Usage(1, 2, 3))
    view.apply(ev.TurnFinished("s1", "completed", result=result))
    assert view.last_result is result
    view.apply(ev.TurnFinished("s1", "failed", "boom"))  # no result: the last one stays
    assert view.last_result is result


def test_settings_events_change_the_view() -> None:
    view = make_view()
    view.apply(ev.SessionRenamed("s1", "b"))
    view.apply(ev.ModelChanged("s1", "big", 32000))
    view.apply(ev.ModeChanged("s1", "plan"))
    view.apply(ev.SandboxChanged("s1", "required"))
    view.apply(ev.SessionRulesChanged("s1", ("Bash(ls:*)",)))
    view.apply(ev.ReadOnlyChanged("s1", "held elsewhere", SessionState.RUNNING))
    assert (view.name, view.model, view.context_window, view.mode) == ("b", "big", 32000, "plan")
    assert view.sandbox_mode == "required" and view.session_rules == ["Bash(ls:*)"]
    assert view.read_only == "held elsewhere" and view.state is SessionState.RUNNING


def test_conversation_events_replace_and_clear_the_messages() -> None:
    view = make_view()
    view.apply(ev.ConversationLoaded("s1", ({"role": "user", "content": "hi"},), 42))
    view.apply(ev.MessageAdded("s1", {"role": "assistant", "content": "hello"}))
    view.apply(ev.UsageUpdated("s1", Usage(5, 6, 11), 50, 8000))
    assert [m["content"] for m in view.messages] == ["hi", "hello"]
    assert view.context_tokens == 50 and view.usage.total_tokens == 11
    view.apply(ev.ConversationCleared("s1"))
    assert view.messages == [] and view.context_tokens == 0


async def test_asks_and_queue_are_tracked() -> None:
    view = make_view()
    reply: asyncio.Future[ev.PermissionAnswer] = asyncio.get_running_loop().create_future()
    call = ToolCall("c1", "bash", "{}")
    view.apply(ev.PermissionRequested("s1", "r1", call, "ls", "ask", (), reply))
    view.apply(ev.QueueChanged("s1", (("p1", "next"),)))
    assert list(view.pending) == ["r1"] and [(p.id, p.text) for p in view.queue] == [("p1", "next")]
    view.apply(ev.PermissionResolved("s1", "r1", "allow_once"))
    assert view.pending == {}


def test_unique_name_numbers_and_stays_within_the_limit() -> None:
    assert unique_name("s1", set()) == "s1"
    assert unique_name("a-fork", {"a-fork", "a-fork-2"}) == "a-fork-3"
    long = "x" * MAX_NAME
    assert len(unique_name(long, {long})) == MAX_NAME


def test_auto_names_take_the_first_free_number() -> None:
    """After s2 of s1..s3 is closed and forgotten, the next session is s2, not s3-2 (count + 1)."""
    assert next_number_name(set()) == "s1"
    assert next_number_name({"s1", "s3"}) == "s2"
    assert next_number_name({"s1", "s2", "s3"}) == "s4"


def test_names_that_read_as_options_are_refused() -> None:
    for bad in ("-rf", "--help", "-"):
        with pytest.raises(SessionError, match="not starting with '-'"):
            check_name(bad)
    assert check_name("a-b") == "a-b"


def test_the_state_keeps_its_note_until_the_next_change() -> None:
    view = make_view()
    view.apply(ev.SessionStateChanged("s1", SessionState.QUEUED, "waiting for a turn slot"))
    assert view.state is SessionState.QUEUED and view.state_detail == "waiting for a turn slot"
    view.apply(ev.ReadOnlyChanged("s1", "held elsewhere", SessionState.RUNNING))  # the holder's state
    assert view.state is SessionState.RUNNING and view.state_detail == ""


async def test_only_unanswered_asks_conflicts_and_pauses_are_open() -> None:
    loop = asyncio.get_running_loop()
    view = make_view()
    call = ToolCall("c1", "run_command", "{}")
    asks = [
        ev.PermissionRequested("s1", rid, call, "ls", "no rule", (), loop.create_future()) for rid in "ab"
    ]
    pause = ev.BudgetPaused("s1", "session", "usd", "$1.00", "$1.00", "spent", loop.create_future())
    for event in (*asks, pause):
        view.apply(event)
    assert view.open_asks == asks and view.open_pause is pause
    asks[0].reply.set_result(ev.PermissionAnswer("allow_once"))  # answered; its resolved event comes later
    pause.reply.set_result("stop")
    assert view.open_asks == [asks[1]] and list(view.pending) == ["a", "b"] and view.open_pause is None
