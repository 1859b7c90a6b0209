"""Conflicts and budget pauses answered over the real API (real httpx against the real server on
127.0.0.1): listed in GET /inbox, answered by their exact id with the answers the terminal's bars offer,
once (first answer wins, the other side's bar goes), every answer recorded with who gave it."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

from paragents import events as ev
from paragents.llm.replay import ScriptedResponse
from paragents.models import SessionState
from paragents.serve.auth import SESSION_HEADER, sign_browser_token
from tests.serve.conftest import KEY, Served
from tests.serve.held import BIG, held_conflict, listing

H = {"Authorization": f"Bearer {KEY}"}


async def test_a_conflict_is_answered_by_its_id_once_with_its_own_choices(served: Served) -> None:
    s = served
    sid, cid, gate = await held_conflict(s)
    items = (await s.client.get("/inbox", headers=H)).json()["items"]
    (item,) = [i for i in items if i["id"] == cid]
    assert (item["kind"], item["session_id"], item["holder"]) == ("conflict", sid, "a")
    assert item["choices"] == ["wait", "run_anyway", "skip"]
    url = f"/conflicts/{cid}/answer"
    assert (await s.client.post(url, json={"answer": "skip"})).status_code == 401
    not_offered = await s.client.post(url, json={"answer": "reread"}, headers=H)
    assert not_offered.status_code == 422, not_offered.text
    assert (await s.client.post(url, json={"answer": "allow_once"}, headers=H)).status_code == 400
    assert (
        await s.client.post("/conflicts/nope/answer", json={"answer": "skip"}, headers=H)
    ).status_code == 404
    as_ask = await s.client.post(f"/inbox/{cid}/answer", json={"answer": "allow_once"}, headers=H)
    assert as_ask.status_code == 422, as_ask.text  # an ask's answer is not a conflict's
    ok = await s.client.post(url, json={"answer": "skip"}, headers=H)
    assert ok.status_code == 200, ok.text
    assert ok.json()["by"].startswith("web:key")
    second = await s.client.post(url, json={"answer": "run_anyway"}, headers=H)
    assert second.status_code == 409 and "skip by web:key" in second.json()["error"]["message"]
    await asyncio.wait_for(s.runtime.wait_idle(sid), 30)
    finished = [e for e in s.sink.events if isinstance(e, ev.ToolCallFinished) and e.session_id == sid]
    assert [f.status for f in finished] == ["skipped"]
    (resolved,) = [e for e in s.sink.events if isinstance(e, ev.ConflictResolved)]
    assert resolved.answer == "skip" and resolved.by.startswith("web:key")
    row = await s.runtime.approvals.get_approval(cid)
    assert row is not None and row.answered_by is not None and row.answered_by.startswith("web:key")
    assert (s.project / "notes.txt").read_text() == "A\n"
    assert cid not in [i["id"] for i in (await s.client.get("/inbox", headers=H)).json()["items"]]
    gate.set()
    await asyncio.wait_for(s.runtime.wait_idle(), 30)


async def test_wait_from_the_page_takes_the_bar_away_and_the_call_runs_once_released(served: Served) -> None:
    s = served
    sid, cid, gate = await held_conflict(s)
    view = s.runtime.sessions[sid]
    ok = await s.client.post(f"/conflicts/{cid}/answer", json={"answer": "wait"}, headers=H)
    assert ok.status_code == 200, ok.text
    await s.sink.wait_for(lambda: not view.open_conflicts and cid not in view.conflicts)  # the bar goes
    assert (s.project / "notes.txt").read_text() == "A\n"  # still held
    gate.set()
    await asyncio.wait_for(s.runtime.wait_idle(), 30)
    assert (s.project / "notes.txt").read_text() == "B\n"


async def test_a_budget_pause_is_answered_by_its_id_once_and_recorded(served: Served) -> None:
    s = served
    rt = s.runtime
    view = await rt.lifecycle.new_session("api")
    rt.budgets.set_budget(view.id, "session", "12k")
    (s.project / "a").mkdir()
    (s.project / "b").mkdir()
    s.replay.add(
        [listing("a", "c1"), listing("b", "c2"), ScriptedResponse.from_message(content="done", usage=BIG)],
        session="api",
    )
    rt.submit(view.id, "go")
    await s.sink.wait_for(lambda: view.state is SessionState.BUDGET)
    items = (await s.client.get("/inbox", headers=H)).json()["items"]
    (item,) = [i for i in items if i["kind"] == "pause"]
    first = item["id"]
    assert view.budget_pause is not None and first == view.budget_pause.pause_id
    assert (item["level"], item["choices"]) == ("session", ["raise", "one_more", "stop"])
    url = f"/pauses/{first}/answer"
    bad = await s.client.post(url, json={"answer": "raise", "value": "lots"}, headers=H)
    assert bad.status_code == 400, bad.text
    assert (await s.client.post(url, json={"answer": "go_on"}, headers=H)).status_code == 400
    assert (await s.client.post("/pauses/nope/answer", json={"answer": "stop"}, headers=H)).status_code == 404
    ok = await s.client.post(url, json={"answer": "one_more"}, headers=H)
    assert ok.status_code == 200, ok.text
    await s.sink.wait_for(lambda: view.open_pause is not None and view.open_pause.pause_id != first)
    second = view.open_pause
    assert second is not None
    stale = await s.client.post(url, json={"answer": "stop"}, headers=H)  # a late answer to the first
    assert stale.status_code == 409 and "one_more by web:key" in stale.json()["error"]["message"]
    assert view.open_pause is second and not second.reply.done()  # the second pause is not answered
    raised = await s.client.post(
        f"/pauses/{second.pause_id}/answer", json={"answer": "raise", "value": "1000k"}, headers=H
    )
    assert raised.status_code == 200, raised.text
    tui = rt.budgets.answer_pause(second.pause_id, "stop", "", "user")  # the terminal's bar, too late
    assert tui.status == "already_answered" and "raise 1000k by web:key" in tui.message
    await asyncio.wait_for(rt.wait_idle(view.id), 30)
    assert view.last_result is not None and view.last_result.error_kind is None
    await rt.budgets.saved()
    recorded = await rt.store.events.all(view.id, "budget_answer")
    assert [(r["data"]["pause_id"], r["data"]["answer"]) for r in recorded] == [
        (first, "one_more"),
        (second.pause_id, "raise"),
    ]
    assert all(r["data"]["by"].startswith("web:key") for r in recorded)


async def test_the_terminals_answer_wins_and_the_page_is_refused(served: Served) -> None:
    s = served
    rt = s.runtime
    view = await rt.lifecycle.new_session("api")
    rt.budgets.set_budget(view.id, "session", "12k")
    (s.project / "a").mkdir()
    s.replay.add(
        [listing("a", "c1"), ScriptedResponse.from_message(content="done", usage=BIG)], session="api"
    )
    rt.submit(view.id, "go")
    await s.sink.wait_for(lambda: view.state is SessionState.BUDGET)
    assert view.budget_pause is not None
    pid = view.budget_pause.pause_id
    assert rt.budgets.answer_pause(pid, "stop", "", "user").accepted
    late = await s.client.post(f"/pauses/{pid}/answer", json={"answer": "one_more"}, headers=H)
    assert late.status_code == 409 and "stop by user" in late.json()["error"]["message"]
    await asyncio.wait_for(rt.wait_idle(view.id), 30)
    assert view.last_result is not None and view.last_result.error_kind == "budget"


async def test_another_projects_conflict_or_this_servers_pause_is_refused_to_a_foreign_credential(
    served: Served, tmp_path: Path
) -> None:
    s = served
    stranger = subprocess.Popen(["sleep", "600"])  # the other process waiting on the conflict
    try:
        other = tmp_path / "other-project"
        other.mkdir()
        record = await s.runtime.store.sessions.create(name="x", project_dir=other, workdir=other, model="m")
        await s.runtime.store.approvals.add(
            "other-conflict-1",
            record.id,
            kind="conflict",
            tool="write_file",
            summary="write_file deploy.sh",
            call={"id": "c1", "name": "write_file", "arguments": "{}"},
            choices=("wait", "run_anyway", "skip"),
            pid=stranger.pid,
        )
        refused = await s.client.post(
            "/conflicts/other-conflict-1/answer", json={"answer": "run_anyway"}, headers=H
        )
        assert refused.status_code == 403 and str(other.resolve()) in refused.json()["error"]["message"]
        row = await s.runtime.approvals.get_approval("other-conflict-1")
        assert row is not None and row.state == "pending"
        view = await s.runtime.lifecycle.new_session("api")
        s.runtime.budgets.set_budget(view.id, "session", "12k")
        (s.project / "a").mkdir()
        s.replay.add(
            [listing("a", "c1"), ScriptedResponse.from_message(content="done", usage=BIG)], session="api"
        )
        s.runtime.submit(view.id, "go")
        await s.sink.wait_for(lambda: view.state is SessionState.BUDGET)
        assert view.budget_pause is not None
        foreign = {SESSION_HEADER: sign_browser_token(b"c" * 32, s.clock.now, str(other.resolve()))}
        url = f"/pauses/{view.budget_pause.pause_id}/answer"
        assert (await s.client.post(url, json={"answer": "one_more"}, headers=foreign)).status_code == 403
        assert view.open_pause is not None
        assert s.runtime.budgets.answer_pause(view.budget_pause.pause_id, "stop", "", "user").accepted
        await asyncio.wait_for(s.runtime.wait_idle(view.id), 30)
    finally:
        stranger.kill()
        stranger.wait()
