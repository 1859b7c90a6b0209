"""External ACP agents as sessions, against the fake agent (tests/acp/fake_agent.py) as a subprocess:
updates rendered as session events, one policy over its permission asks, its file and terminal
requests served by paragents' tools under the conflict checker, cancel and crashes."""

from __future__ import annotations

import pytest

from paragents import events as ev
from paragents.events import PermissionAnswer
from paragents.models import SessionState
from paragents.sessions.acp import agent_of
from tests.acp.conftest import AcpEnv, idle
from tests.acp.helpers import notices, texts
from tests.patience import HANG_GUARD_S


async def test_updates_become_session_events_and_the_transcript_is_stored(aenv: AcpEnv) -> None:
    rt = await aenv.runtime()
    view = await aenv.session(rt, "q")
    rt.submit(view.id, "say Hello world")
    await idle(rt, view.id)
    sink = aenv.sink
    assert view.last_result is not None and view.last_result.status == "completed", view.last_result
    assert texts(sink, view.id) == "Hello world"
    assert "".join(e.text for e in sink.of(ev.ReasoningDelta, view.id)) == "thinking about it"
    assert "plan:\n[x] look\n[~] answer" in notices(sink, view.id)
    assert view.context_tokens == 1234 and view.context_window == 32000
    agent = agent_of(rt, view.id)
    assert agent is not None and agent.log.commands == [("init", "make AGENTS.md")]
    stored = [m.for_display() for m in await rt.store.messages.load(view.id)]
    assert [(m["role"], m.get("content")) for m in stored] == [
        ("user", "say Hello world"),
        ("assistant", "Hello world"),
    ]
    assert view.model == "acp:fake" and view.state is SessionState.IDLE
    await rt.shutdown()


async def test_a_rule_answers_the_agents_permission_ask_without_asking(aenv: AcpEnv) -> None:
    rt = await aenv.runtime({"allow": ["Bash(echo *)"], "deny": ["Bash(rm *)"]})
    view = await aenv.session(rt, "q")
    (aenv.project / "keep.txt").write_text("keep\n")
    rt.submit(view.id, "run echo from-the-terminal\nrun rm keep.txt")
    await idle(rt, view.id)
    sink = aenv.sink
    assert not sink.of(ev.PermissionRequested, view.id)
    said = texts(sink, view.id)
    assert "ran: from-the-terminal" in said and "rejected" in said
    assert (aenv.project / "keep.txt").exists()
    assert any("denied by policy" in n and "rm keep.txt" in n for n in notices(sink, view.id))
    audit = await rt.store.audit.recent(view.id)
    answers = [(a["answered_by"], a["answer"]) for a in audit]
    assert ("policy", "allow") in answers and ("policy", "deny") in answers
    outcomes = [m.outcome for m in await rt.store.messages.load(view.id) if m.role == "tool"]
    assert outcomes == ["ok", "denied"]  # the denied rm is stored as denied, not as an error
    await rt.shutdown()


async def test_an_unmatched_ask_goes_to_the_user_with_the_agents_options(aenv: AcpEnv) -> None:
    rt = await aenv.runtime()
    view = await aenv.session(rt, "q")
    aenv.sink.answers.append(PermissionAnswer("reject_once"))
    rt.submit(view.id, "run touch made.txt")
    await idle(rt, view.id)
    asks = aenv.sink.of(ev.PermissionRequested, view.id)
    assert len(asks) == 1 and asks[0].summary == "touch made.txt"
    assert asks[0].preview is not None and asks[0].preview.text == "touch made.txt"
    assert asks[0].preview.cwd == str(view.workdir)  # where it runs, not "(not usable)"
    assert asks[0].agent_options == (
        ("allow_once", "Allow"),
        ("allow_always", "Always allow"),
        ("reject_once", "Reject"),
    )
    assert "rejected" in texts(aenv.sink, view.id) and not (aenv.project / "made.txt").exists()
    await rt.shutdown()


async def test_a_command_the_user_allowed_once_is_not_asked_again_when_its_terminal_runs(
    aenv: AcpEnv,
) -> None:
    """The agent announces `touch made.txt` with request_permission, then runs it as `bash -c ...` in
    a client terminal: one ask, not two (the terminal's command is the approved one)."""
    rt = await aenv.runtime()
    view = await aenv.session(rt, "q")
    aenv.sink.answers.append(PermissionAnswer("allow_once"))
    rt.submit(view.id, "run touch made.txt")
    await idle(rt, view.id)
    asks = aenv.sink.of(ev.PermissionRequested, view.id)
    assert [a.summary for a in asks] == ["touch made.txt"]
    assert (aenv.project / "made.txt").exists()
    await rt.shutdown()


async def test_a_served_request_the_user_was_asked_about_ends_its_entry(aenv: AcpEnv) -> None:
    """A file read the agent asks paragents for (no rule: the user is asked) does not stay "asking":
    its entry ends ok once read, denied when the user says no."""
    outside = aenv.project.parent / "notes.txt"  # outside the workdir: reading it asks
    outside.write_text("hello\n")
    rt = await aenv.runtime()
    view = await aenv.session(rt, "q")
    aenv.sink.answers.extend([PermissionAnswer("allow_once"), PermissionAnswer("reject_once")])
    rt.submit(view.id, f"read {outside}")
    await idle(rt, view.id)
    rt.submit(view.id, f"read {outside}")
    await idle(rt, view.id)
    asks = aenv.sink.of(ev.PermissionRequested, view.id)
    ended = {e.call.id: e.status for e in aenv.sink.of(ev.ToolCallFinished, view.id)}
    assert [ended.get(a.call.id) for a in asks] == ["ok", "denied"]
    await rt.shutdown()


async def test_a_write_takes_a_reservation_and_waits_while_another_session_holds_the_file(
    aenv: AcpEnv,
) -> None:
    rt = await aenv.runtime({"allow": ["Edit"]})
    a, b = await aenv.session(rt, "a"), await aenv.session(rt, "b")
    target = aenv.project / "shared.txt"
    aenv.sink.conflict_answers["b"] = ["skip"]
    rt.submit(a.id, "write shared.txt from-a\nwait")
    await aenv.sink.wait_for(lambda: "written" in texts(aenv.sink, a.id), HANG_GUARD_S)
    held = await rt.store.reservations.all()
    assert [(r.session_id, r.path) for r in held] == [(a.id, str(target.resolve()))]
    rt.submit(b.id, "write shared.txt from-b")
    await idle(rt, b.id)
    conflict = aenv.sink.of(ev.ConflictDetected, b.id)[0]
    assert (conflict.kind, conflict.holder) == ("reservation", "a")
    # held at the agent's permission request already (issue 26 item 10): it never gets to write
    assert "rejected" in texts(aenv.sink, b.id)
    assert target.read_text() == "from-a\n"
    rt.cancel(a.id)
    await idle(rt, a.id)
    assert await rt.store.reservations.all() == []
    await rt.shutdown()


async def test_a_file_changed_behind_the_session_is_a_stale_read(aenv: AcpEnv) -> None:
    rt = await aenv.runtime({"allow": ["Edit", "Read"]})
    view = await aenv.session(rt, "q")
    target = aenv.project / "notes.txt"
    target.write_text("v1\n")
    aenv.sink.conflict_answers["q"] = ["skip"]
    rt.submit(view.id, "read notes.txt\nsneak notes.txt v2\nwrite notes.txt v3")
    await idle(rt, view.id)
    conflict = aenv.sink.of(ev.ConflictDetected, view.id)[0]
    assert conflict.kind == "stale_read" and conflict.diff is not None and "+v2" in conflict.diff
    assert target.read_text() == "v2\n"
    rt.submit(view.id, "read notes.txt")
    await idle(rt, view.id)
    assert any("changed since this session last read it" in n for n in notices(aenv.sink, view.id))
    await rt.shutdown()


async def test_cancel_sends_session_cancel_and_shows_the_stop_reason(aenv: AcpEnv) -> None:
    rt = await aenv.runtime()
    view = await aenv.session(rt, "q")
    rt.submit(view.id, "wait")
    await aenv.sink.wait_for(lambda: "waiting" in texts(aenv.sink, view.id), HANG_GUARD_S)
    rt.cancel(view.id)
    await idle(rt, view.id)
    assert view.last_result is not None and view.last_result.status == "cancelled"
    assert any("agent's stop reason: cancelled" in n for n in notices(aenv.sink, view.id))
    agent = agent_of(rt, view.id)
    assert agent is not None and agent.link.running  # the agent stays up for the next prompt
    await rt.shutdown()
    assert agent.link.proc is None


async def test_a_crash_is_shown_with_stderr_and_the_next_prompt_restarts_it(aenv: AcpEnv) -> None:
    rt = await aenv.runtime()
    view = await aenv.session(rt, "q")
    rt.submit(view.id, "crash")
    await idle(rt, view.id)
    result = view.last_result
    assert result is not None and result.status == "failed" and result.error_kind == "agent"
    assert "exit code 3" in (result.error or "") and "segmentation fault in the model" in (result.error or "")
    rt.submit(view.id, "say again")
    await idle(rt, view.id)
    assert view.last_result is not None and view.last_result.status == "completed"
    await rt.shutdown()


async def test_a_launch_failure_shows_stderr_and_exit_code(aenv: AcpEnv) -> None:
    rt = await aenv.runtime(FAKE_ACP_INIT_CRASH="1")
    view = await aenv.session(rt, "q")
    await aenv.sink.wait_for(
        lambda: any("exit code 5" in n for n in notices(aenv.sink, view.id)), HANG_GUARD_S
    )
    shown = next(n for n in notices(aenv.sink, view.id) if "exit code 5" in n)
    assert "during initialize" in shown and "no API key configured" in shown
    await rt.shutdown()


async def test_a_missing_program_names_its_install_command(aenv: AcpEnv) -> None:
    from paragents.acp.launch import AgentUnavailable, find_program, resolve_agent
    from paragents.sessions.view import SessionError

    with pytest.raises(AgentUnavailable, match="npm install -g @qwen-code/qwen-code"):
        find_program(resolve_agent("qwen", {}), {"PATH": str(aenv.project)})
    rt = await aenv.runtime()
    with pytest.raises(SessionError, match="unknown agent 'nope'; known agents: qwen, opencode"):
        await rt.new_agent_session("nope")
    assert rt.sessions == {}
    await rt.shutdown()


async def test_a_restored_session_reloads_the_agents_session_when_it_can(aenv: AcpEnv) -> None:
    rt = await aenv.runtime(FAKE_ACP_LOAD="1")
    view = await aenv.session(rt, "q")
    rt.submit(view.id, "say first answer")
    await idle(rt, view.id)
    remote = agent_of(rt, view.id).link.remote_id  # type: ignore[union-attr]
    assert remote and await rt.store.agent_sessions.get(view.id) == ("fake", remote)
    await rt.shutdown()

    aenv.sink.events.clear()
    again = await aenv.runtime(FAKE_ACP_LOAD="1")
    [restored] = await again.restore()
    assert [m.get("content") for m in restored.messages] == ["say first answer", "first answer"]
    agent = agent_of(again, restored.id)
    assert agent is not None and agent.link.remote_id == remote
    again.submit(restored.id, "say second")
    await idle(again, restored.id)
    assert any("reloaded (session/load)" in n for n in notices(aenv.sink, restored.id))
    assert texts(aenv.sink, restored.id) == "second"  # the agent's replay of the old turns is not shown twice
    await again.shutdown()


async def test_an_agent_that_writes_files_itself_is_held_by_another_sessions_reservation(
    aenv: AcpEnv,
) -> None:
    """Issue 26 item 10: opencode writes files itself after its permission ask; the ask runs the
    conflict checker first, so a file another session reserved is never written meanwhile."""
    rt = await aenv.runtime({"allow": ["Edit"]})
    a, b = await aenv.session(rt, "a"), await aenv.session(rt, "b")
    target = aenv.project / "shared.txt"
    aenv.sink.conflict_answers["b"] = ["skip"]
    rt.submit(a.id, "write shared.txt from-a\nwait")
    await aenv.sink.wait_for(lambda: "written" in texts(aenv.sink, a.id), HANG_GUARD_S)
    rt.submit(b.id, f"edit {target} from-b")
    await idle(rt, b.id)
    [conflict] = aenv.sink.of(ev.ConflictDetected, b.id)
    assert (conflict.kind, conflict.holder, conflict.path) == ("reservation", "a", str(target.resolve()))
    assert "rejected" in texts(aenv.sink, b.id) and "edited" not in texts(aenv.sink, b.id)
    assert target.read_text() == "from-a\n"
    assert any("held by the conflict checker" in n for n in notices(aenv.sink, b.id))
    rt.cancel(a.id)
    await idle(rt, a.id)
    rt.submit(b.id, f"edit {target} from-b")  # released: the edit is reserved for b and made
    await idle(rt, b.id)
    assert target.read_text() == "from-b\n"
    stored = [m.message for m in await rt.store.messages.load(b.id) if m.message.get("tool_calls")]
    args = [c["function"]["arguments"] for m in stored for c in m["tool_calls"]]
    assert len(args) == 2 and all(str(target) in a for a in args), (
        args
    )  # item 11: the arguments that came later are kept
    await rt.shutdown()


async def test_an_edit_ask_naming_no_path_asks_the_user(aenv: AcpEnv) -> None:
    rt = await aenv.runtime({"allow": ["Edit"]})
    view = await aenv.session(rt, "q")
    aenv.sink.answers.append(PermissionAnswer("reject_once"))
    rt.submit(view.id, "pathless")
    await idle(rt, view.id)
    [ask] = aenv.sink.of(ev.PermissionRequested, view.id)
    assert "names no command or path" in ask.reason or ask.reason
    assert "rejected" in texts(aenv.sink, view.id)
    await rt.shutdown()
