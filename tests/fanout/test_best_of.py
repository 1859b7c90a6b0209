"""Best-of-N with scripted candidates: the evidence order, the main checkout untouched, apply
through the lanes merge flow, graft, discard through lanes gc, and the group's approvals."""

from __future__ import annotations

from pathlib import Path

import pytest

from paragents import events as ev
from paragents.events import PermissionAnswer
from paragents.fanout.compare import apply_candidate, compare, discard_all, graft_hunks
from paragents.fanout.errors import EXIT_CONFIG, FanoutError
from paragents.fanout.group import start_best_of
from paragents.fanout.host import FanoutHost
from paragents.fanout.request import FanoutRequest, parse_fanout
from paragents.llm.replay import ReplayServer
from paragents.sessions.factory import opened
from tests.fanout.conftest import PROMPT, SLUG, VERIFY, call, make_runtime, reply, script_candidates
from tests.lanes.conftest import commit_all, sh


async def test_best_of_three_ranks_the_smallest_passing_diff_first(
    server: ReplayServer, repo: Path, tmp_path: Path
) -> None:
    script_candidates(server)
    rt, sink = await make_runtime(server, repo, tmp_path / "db.sqlite")
    sink.answers.extend([PermissionAnswer("allow_once")] * 6)
    try:
        group = await start_best_of(
            FanoutHost.of(opened(rt)), FanoutRequest(3, PROMPT, verify=VERIFY), open_panel=False
        )
        assert [s.name for s in group.siblings] == [f"{SLUG}-{i}" for i in (1, 2, 3)]
        await group.done.wait()
        cmp = await compare(rt.store.fanout, group.id)
        assert [c.name for c in cmp.candidates] == [f"{SLUG}-3", f"{SLUG}-2", f"{SLUG}-1"]
        broken = cmp.find(1)
        assert broken.verify is not None and broken.verify.exit_code != 0
        assert broken.verify.failing == ["test_app.py::test_add"]
        assert cmp.find(3).verify is not None and cmp.find(3).verify.passed  # type: ignore[union-attr]
        assert cmp.find(3).lines < cmp.find(2).lines
        assert cmp.find(2).overlaps.get(3) == ["app.py"]  # both rewrote the same line
        # all three changed the one file app.py: the same overlap count for each, the others by place
        shown = {c["session"]: c["overlaps_shown"] for c in cmp.as_dict()["candidates"]}
        assert {cell.split(": ")[0] for cell in shown.values()} == {"1 file"}, shown
        assert shown[f"{SLUG}-3"].split(": ")[1].replace("!", "") == "#2, #3"
        # the main checkout was never touched
        assert (repo / "app.py").read_text() == "def add(a, b):\n    return a - b\n"
        assert sh(repo, "status", "--porcelain") == ""
        # apply the best through the lanes merge flow
        result = await apply_candidate(FanoutHost.of(opened(rt)), group.id, cmp.candidates[0].name)
        assert result.commit and sh(repo, "rev-parse", "main") == result.commit
        assert "a + b" in sh(repo, "show", "main:app.py")
        stored = await rt.store.fanout.get_group(group.id)
        assert stored is not None and stored.state == "applied" and stored.choice is not None
        assert stored.choice["apply"]["candidate"] == f"{SLUG}-3"
        # discard the rest: lanes gc rules, unmerged work bundled first
        decisions = await discard_all(FanoutHost.of(opened(rt)), group.id)
        assert {d.lane: d.action for d in decisions} == {f"{SLUG}-{i}": "removed" for i in (1, 2, 3)}
        bundled = {d.lane for d in decisions if d.bundle}
        assert bundled == {f"{SLUG}-1", f"{SLUG}-2"}  # the applied lane's work had landed
        assert await rt.store.lanes.all() == []
        stored = await rt.store.fanout.get_group(group.id)
        assert stored is not None and stored.state == "applied"
        assert [h["action"] for h in (stored.choice or {})["history"]] == ["apply", "discard"]
    finally:
        await rt.shutdown()


async def test_a_grafted_hunk_applies_in_the_chosen_lane(
    server: ReplayServer, repo: Path, tmp_path: Path
) -> None:
    server.add(
        [call("write_file", path="app.py", content="def add(a, b):\n    return a + b\n"), reply("ok")],
        session="add-docs-1",
    )
    server.add([call("write_file", path="NOTES.md", content="add adds\n"), reply("ok")], session="add-docs-2")
    (repo / "AGENTS.md").write_text("Always run the tests.\n")
    commit_all(repo, "instructions")
    rt, sink = await make_runtime(server, repo, tmp_path / "db.sqlite")
    sink.answers.extend([PermissionAnswer("allow_once")] * 4)
    try:
        group = await start_best_of(FanoutHost.of(opened(rt)), FanoutRequest(2, "add docs"), open_panel=False)
        await group.done.wait()
        firsts = [next(r for r in server.requests if r.session == f"add-docs-{i}") for i in (1, 2)]
        for request in firsts:  # same prompt, same project instructions (from each lane's checkout)
            messages = request.body_json["messages"]
            assert "Always run the tests." in messages[0]["content"] and messages[-1]["content"] == "add docs"
        cmp = await compare(rt.store.fanout, group.id)
        donor = cmp.find("add-docs-2")
        [hunk] = donor.hunks
        text = await graft_hunks(FanoutHost.of(opened(rt)), group.id, "add-docs-1", "add-docs-2", {hunk.key})
        assert "1 hunk(s) of add-docs-2" in text
        lane = Path(cmp.find("add-docs-1").record.lane_path or "")
        assert (lane / "NOTES.md").read_text() == "add adds\n"
        assert sh(lane, "status", "--porcelain") == ""
        with pytest.raises(FanoutError) as info:  # the same hunk again no longer applies
            await graft_hunks(FanoutHost.of(opened(rt)), group.id, "add-docs-1", "add-docs-2", {hunk.key})
        assert info.value.exit_code == 6
    finally:
        await rt.shutdown()


async def test_a_childs_approval_is_unblocked_when_answered_for_the_group(
    server: ReplayServer, repo: Path, tmp_path: Path
) -> None:
    for i in (1, 2):
        server.add([call("run_command", command="echo hi > out.txt"), reply("ok")], session=f"run-echo-{i}")
    rt, sink = await make_runtime(server, repo, tmp_path / "db.sqlite")
    try:
        group = await start_best_of(FanoutHost.of(opened(rt)), FanoutRequest(2, "run echo"), open_panel=False)
        await sink.wait_for(lambda: len(group.pending) == 2)
        for sid in group.session_ids:
            assert rt.sessions[sid].state.value == "waiting"
        asks = sink.of(ev.PermissionRequested)
        assert {a.session_id for a in asks} == group.session_ids
        assert await group.allow(["Bash(echo *)", "Edit(./out.txt)"]) == 2
        await group.done.wait()
        stored = await rt.store.fanout.get_group(group.id)
        assert stored is not None and stored.settings["rules"] == ["Bash(echo *)", "Edit(./out.txt)"]
        assert all(c.state == "finished" and c.evidence["files"] for c in stored.candidates)
    finally:
        await rt.shutdown()


async def test_bad_requests_have_one_readable_message(
    server: ReplayServer, repo: Path, tmp_path: Path
) -> None:
    rt, _ = await make_runtime(server, repo, tmp_path / "db.sqlite")
    try:
        for request, words in (
            (FanoutRequest(9, "x"), "1 to 8 sessions, not 9"),
            (FanoutRequest(2, "x", models=("nope",)), "unknown model 'nope'"),
        ):
            with pytest.raises(FanoutError, match=words) as info:
                await start_best_of(FanoutHost.of(opened(rt)), request, open_panel=False)
            assert info.value.exit_code == EXIT_CONFIG
        assert rt.sessions == {} and await rt.store.fanout.list_groups() == []
    finally:
        await rt.shutdown()
    plain = tmp_path / "plain"
    plain.mkdir()
    rt, _ = await make_runtime(server, plain, tmp_path / "db2.sqlite")
    try:
        with pytest.raises(FanoutError, match="not inside a git repository") as info:
            await start_best_of(FanoutHost.of(opened(rt)), FanoutRequest(2, "x"), open_panel=False)
        assert info.value.exit_code == EXIT_CONFIG
    finally:
        await rt.shutdown()


def test_the_slash_arguments_are_read_with_the_prompt_as_written() -> None:
    req = parse_fanout('3 --models m,m2 --verify "uv run pytest -q" --judge don\'t break it')
    assert req == FanoutRequest(3, "don't break it", ("m", "m2"), "uv run pytest -q", True, None)
    assert parse_fanout("2 --judge=m2 fix").judge_model == "m2"
    with pytest.raises(FanoutError, match="how many sessions"):
        parse_fanout("fix it")


async def test_a_group_budget_pauses_every_sibling_and_raising_it_resumes_all(
    server: ReplayServer, repo: Path, tmp_path: Path
) -> None:
    for i in (1, 2):
        server.add([call("read_file", path="app.py"), reply("ok")], session=f"read-app-{i}")
    rt, sink = await make_runtime(server, repo, tmp_path / "db.sqlite", budgets={"group": "6k"})
    sink.answers.extend([PermissionAnswer("allow_once")] * 2)
    try:
        group = await start_best_of(FanoutHost.of(opened(rt)), FanoutRequest(2, "read app"), open_panel=False)
        await sink.wait_for(lambda: len(sink.of(ev.BudgetPaused)) == 2)
        paused = sink.of(ev.BudgetPaused)
        assert {p.session_id for p in paused} == group.session_ids
        assert {p.level for p in paused} == {"group"}
        rt.budgets.set_budget(
            group.siblings[0].session_id, "group", "100k"
        )  # raises the group's cap: both go on
        await group.done.wait()
        stored = await rt.store.fanout.get_group(group.id)
        assert stored is not None and all(c.state == "finished" for c in stored.candidates)
    finally:
        await rt.shutdown()


async def test_a_verify_command_that_hangs_is_stopped_at_the_timeout(tmp_path: Path) -> None:
    from paragents.fanout.verify import run_verify

    result = await run_verify("echo started; sleep 30", tmp_path, {}, timeout=0.5)
    assert result.timed_out and result.exit_code is None and not result.passed
    assert "did not finish within 0.5 s" in result.tail


def test_failing_tests_are_read_from_pytest_summary_lines() -> None:
    from paragents.fanout.verify import failing_tests

    out = "FAILED tests/a.py::test_x - assert 1 == 2\nERROR tests/b.py::test_y\nFAILED tests/a.py::test_x\n"
    assert failing_tests(out) == ["tests/a.py::test_x", "tests/b.py::test_y"]


async def test_a_candidate_that_deletes_the_tests_is_flagged_and_ranked_after_one_that_does_not(
    server: ReplayServer, repo: Path, tmp_path: Path
) -> None:
    long_fix = "".join(f"# note {i}\n" for i in range(12)) + "def add(a, b):\n    return a + b\n"
    fix = call("write_file", path="app.py", content=long_fix)  # a bigger diff than deleting the tests
    drop = call("run_command", command="rm test_app.py")
    server.add([drop, reply("removed the failing test")], session="make-tests-pass-1")
    server.add([fix, reply("fixed")], session="make-tests-pass-2")
    rt, sink = await make_runtime(server, repo, tmp_path / "db.sqlite")
    sink.answers.extend([PermissionAnswer("allow_once")] * 2)
    try:
        group = await start_best_of(
            FanoutHost.of(opened(rt)), FanoutRequest(2, "make tests pass", verify="true"), open_panel=False
        )
        await group.done.wait()
        cmp = await compare(rt.store.fanout, group.id)
        assert [c.name for c in cmp.candidates] == ["make-tests-pass-2", "make-tests-pass-1"]
        assert cmp.find(1).deleted_tests == ["test_app.py"] and cmp.find(2).deleted_tests == []
        assert cmp.find(1).lines < cmp.find(2).lines
        assert (repo / "test_app.py").exists()
    finally:
        await rt.shutdown()
