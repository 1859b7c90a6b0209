"""A restored ACP session (tests/acp/fake_agent.py as a subprocess): ``session/load`` when the agent
supports it, ``session/resume`` when it supports only that, otherwise the transcript is read-only for
the agent and a prompt waits until the user starts a new agent session (nothing is lost, nothing is
sent into an agent session that does not know the transcript)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from paragents import events as ev
from paragents.models import SessionState
from paragents.sessions import Runtime, SessionError
from paragents.sessions.acp import agent_of
from tests.acp.conftest import AcpEnv, idle
from tests.acp.helpers import calls, notices, texts
from tests.patience import HANG_GUARD_S
from tests.trusting import trusted_config


async def first_run(aenv: AcpEnv, log: Path, **env: str) -> str:
    """Run one turn in a new agent session, shut down; return the agent's session id."""
    rt = await aenv.runtime(None, FAKE_ACP_LOG=str(log), **env)
    view = await aenv.session(rt, "q")
    rt.submit(view.id, "say first answer")
    await idle(rt, view.id)
    remote = agent_of(rt, view.id).link.remote_id  # type: ignore[union-attr]
    await rt.shutdown()
    assert remote and calls(log) == ["new_session", "prompt say first answer"]
    aenv.sink.events.clear()
    return remote


async def restored(aenv: AcpEnv, log: Path, **env: str) -> tuple[Runtime, Any]:
    again = await aenv.runtime(None, FAKE_ACP_LOG=str(log), **env)
    [view] = await again.restore()
    return again, view


async def test_without_session_load_the_transcript_is_read_only_and_a_prompt_waits_for_a_new_session(
    aenv: AcpEnv, tmp_path: Path
) -> None:
    log = tmp_path / "agent.log"
    await first_run(aenv, log)
    again, view = await restored(aenv, log)
    sink = aenv.sink
    # the reopen launched the agent: it cannot reload, so the panel says so before any prompt
    await sink.wait_for(lambda: bool(sink.of(ev.AgentSessionStale, view.id)), HANG_GUARD_S)
    [stale] = sink.of(ev.AgentSessionStale, view.id)
    assert stale.reason is not None and "cannot continue this conversation" in stale.reason
    assert "/agent new" in stale.reason and view.agent_stale == stale.reason
    assert [m.get("content") for m in view.messages] == ["say first answer", "first answer"]

    again.submit(view.id, "say second")
    await sink.wait_for(lambda: any("this prompt waits" in n for n in notices(sink, view.id)), HANG_GUARD_S)
    assert view.state is SessionState.WAITING and view.waiting_on == "a new agent session"
    assert calls(log)[2:] == []  # nothing reached the agent: no session/load, no session/new, no prompt

    await again.start_new_agent_session(view.id)
    await idle(again, view.id)
    assert calls(log)[2:] == ["new_session", "prompt say second"]
    assert texts(sink, view.id) == "second"
    assert view.agent_stale is None and sink.of(ev.AgentSessionStale, view.id)[-1].reason is None
    assert any("a new fake session began here" in n for n in notices(sink, view.id))
    stored = [m.for_display().get("content") for m in await again.store.messages.load(view.id)]
    assert stored == ["say first answer", "first answer", "say second", "second"]
    await again.shutdown()


async def test_a_held_prompt_waits_in_the_queue_and_a_quit_keeps_it(aenv: AcpEnv, tmp_path: Path) -> None:
    """The prompt waits in the session's queue (visible, editable, removable), not in a turn: a quit
    meanwhile keeps it, and it comes back into the queue next time, held (not sent)."""
    log = tmp_path / "agent.log"
    await first_run(aenv, log)
    again, view = await restored(aenv, log)
    sink = aenv.sink
    again.submit(view.id, "say never [b]lost[/b]")
    await sink.wait_for(lambda: any("this prompt waits" in n for n in notices(sink, view.id)), HANG_GUARD_S)
    await sink.wait_for(lambda: [q.text for q in view.queue] == ["say never [b]lost[/b]"], HANG_GUARD_S)
    assert view.state is SessionState.WAITING and view.waiting_on == "a new agent session"
    assert not again.cancel(view.id)  # no turn runs: nothing to cancel, nothing lost
    await again.shutdown()
    assert "prompt say never [b]lost[/b]" not in calls(log)

    aenv.sink.events.clear()
    third, view = await restored(aenv, log)
    drafts = aenv.sink.of(ev.DraftRestored, view.id)
    assert [(d.text, d.queued) for d in drafts] == [("", 1)]  # no draft; one prompt back in the queue
    assert [(q.text, q.held) for q in view.queue] == [("say never [b]lost[/b]", True)]  # held, not sent
    await third.shutdown()
    assert "prompt say never [b]lost[/b]" not in calls(log)


async def test_with_session_load_the_agents_session_is_reloaded(aenv: AcpEnv, tmp_path: Path) -> None:
    log = tmp_path / "agent.log"
    remote = await first_run(aenv, log, FAKE_ACP_LOAD="1")
    again, view = await restored(aenv, log, FAKE_ACP_LOAD="1")
    again.submit(view.id, "say second")
    await idle(again, view.id)
    assert calls(log)[2:] == [f"load_session {remote}", "prompt say second"]
    assert not aenv.sink.of(ev.AgentSessionStale, view.id)
    assert texts(aenv.sink, view.id) == "second"
    await again.shutdown()


async def test_with_only_session_resume_the_agents_session_is_resumed(aenv: AcpEnv, tmp_path: Path) -> None:
    log = tmp_path / "agent.log"
    remote = await first_run(aenv, log, FAKE_ACP_RESUME="1")
    again, view = await restored(aenv, log, FAKE_ACP_RESUME="1")
    again.submit(view.id, "say second")
    await idle(again, view.id)
    assert calls(log)[2:] == [f"resume_session {remote}", "prompt say second"], (
        view.last_result,
        notices(aenv.sink, view.id),
    )
    assert any("resumed (session/resume)" in n for n in notices(aenv.sink, view.id))
    await again.shutdown()


async def test_headless_starts_a_new_agent_session_with_a_note(aenv: AcpEnv, tmp_path: Path) -> None:
    """``paragents run --session NAME`` on such an agent (``auto_new``, set by the CLI): no panel to
    ask in, so a new agent session starts, and the note says the agent does not know the transcript."""
    log = tmp_path / "agent.log"
    await first_run(aenv, log)
    again, view = await restored(aenv, log)
    agent = agent_of(again, view.id)
    assert agent is not None
    agent.wait.auto_new = True
    again.submit(view.id, "say second")
    await idle(again, view.id)
    assert calls(log)[2:] == ["new_session", "prompt say second"]
    assert any("does not know the conversation above" in n for n in notices(aenv.sink, view.id))
    assert view.last_result is not None and view.last_result.status == "completed"
    await again.shutdown()


async def test_a_crashed_agent_without_session_load_still_restarts_on_the_next_prompt(
    aenv: AcpEnv, tmp_path: Path
) -> None:
    log = tmp_path / "agent.log"
    rt = await aenv.runtime(FAKE_ACP_LOG=str(log))
    view = await aenv.session(rt, "q")
    rt.submit(view.id, "crash")
    await idle(rt, view.id)
    rt.submit(view.id, "say again")
    await idle(rt, view.id)
    assert view.last_result is not None and view.last_result.status == "completed"
    assert not aenv.sink.of(ev.AgentSessionStale, view.id)
    assert calls(log) == ["new_session", "prompt crash", "new_session", "prompt say again"]
    await rt.shutdown()


def test_paragents_run_session_on_such_an_agent_starts_a_new_agent_session_with_a_note(
    tmp_path: Path,
) -> None:
    import os
    import subprocess
    import sys

    from tests.acp.conftest import FAKE_AGENT

    project = tmp_path / "proj"
    project.mkdir()
    log = tmp_path / "agent.log"
    agent = {"command": sys.executable, "args": [str(FAKE_AGENT)], "env": {"FAKE_ACP_LOG": str(log)}}
    cfg = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "agents": {"fake": agent}}
    trusted_config(project, cfg)
    env = {**os.environ, "PARAGENTS_API_KEY": "x"}
    base = [sys.executable, "-c", "from paragents.cli import main; main()", "run", "--agent", "fake"]
    base += ["--dir", str(project)]
    for extra in ([], ["--session", "run-1"]):
        done = subprocess.run(
            [*base, *extra, "say " + ("second" if extra else "first")],
            capture_output=True,
            text=True,
            timeout=180,
            env=env,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, done.stderr
    out = done.stdout + done.stderr
    assert "does not know the conversation above" in out and "second" in out
    assert calls(log) == ["new_session", "prompt say first", "new_session", "prompt say second"]


async def test_a_session_reopened_from_the_list_is_read_only_for_such_an_agent_too(
    aenv: AcpEnv, tmp_path: Path
) -> None:
    log = tmp_path / "agent.log"
    rt = await aenv.runtime(None, FAKE_ACP_LOG=str(log))
    view = await aenv.session(rt, "q")
    rt.submit(view.id, "say first answer")
    await idle(rt, view.id)
    await rt.close_session(view.id)
    reopened = await rt.reopen_session(view.id)  # /sessions, Enter
    await aenv.sink.wait_for(lambda: reopened.agent_stale is not None, HANG_GUARD_S)
    assert calls(log) == ["new_session", "prompt say first answer"]  # no new agent session by itself
    await rt.shutdown()


async def test_clear_starts_a_new_agent_session_and_fork_is_refused(aenv: AcpEnv, tmp_path: Path) -> None:
    """/clear in an agent's session makes the agent forget too (a new agent session); /fork is refused
    with what to do, since a copy would be sent to the model endpoint instead of the agent."""
    log = tmp_path / "agent.log"
    rt = await aenv.runtime(None, FAKE_ACP_LOG=str(log))
    view = await aenv.session(rt, "q")
    rt.submit(view.id, "say first")
    await idle(rt, view.id)
    await rt.clear_session(view.id)
    rt.submit(view.id, "say after the clear")
    await idle(rt, view.id)
    assert calls(log) == ["new_session", "prompt say first", "new_session", "prompt say after the clear"]
    with pytest.raises(SessionError, match="/new --agent fake"):
        await rt.fork(view.id)
    with pytest.raises(SessionError, match="external agent"):
        other = await rt.new_session("plain")
        await rt.set_model(other.id, "acp:fake")
    await rt.shutdown()
