"""Split: the planner's plan is validated (retried once), a cycle is refused naming it, subtasks whose
paths overlap run one after the other (the later one sees the earlier one's work) and every subtask
is merged into one integration lane."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paragents.events import PermissionAnswer
from paragents.fanout.split import Plan, Schedule, SplitError, run_split, schedule
from paragents.llm.replay import ReplayServer
from tests.lanes.conftest import sh
from tests.runtime_env import MakeRuntime, reply


def task(tid: str, paths: list[str], deps: list[str] | None = None) -> dict[str, object]:
    return {
        "id": tid,
        "title": f"do {tid}",
        "prompt": f"please do {tid}",
        "paths": paths,
        "depends_on": deps or [],
    }


async def yes(plan: Plan, order: Schedule) -> bool:
    return True


def write(call_id: str, path: str, content: str) -> dict[str, str]:
    return {"id": call_id, "name": "write_file", "arguments": json.dumps({"path": path, "content": content})}


async def test_a_cycle_is_refused_naming_it_and_nothing_runs(
    server: ReplayServer, runtime: MakeRuntime, repo: Path
) -> None:
    rt, _ = await runtime(repo)
    plan = {
        "subtasks": [
            task("api", ["api.py"], ["db"]),
            task("db", ["db.py"], ["ui"]),
            task("ui", ["ui.py"], ["api"]),
        ]
    }
    server.add(reply(json.dumps(plan)), session="planner")
    asked: list[Plan] = []

    async def approve(plan: Plan, order: Schedule) -> bool:
        asked.append(plan)
        return True

    with pytest.raises(SplitError, match=r"cycle api -> db -> ui -> api \(each depends on the next\)") as err:
        await run_split(rt, "build it", approve)
    assert err.value.code == 3 and asked == []
    assert await rt.store.lanes.all() == [] and len(server.requests) == 1


async def test_invalid_plan_is_retried_once_then_planner_failed(
    server: ReplayServer, runtime: MakeRuntime, repo: Path
) -> None:
    rt, _ = await runtime(repo)
    bad = {"subtasks": [task("a", ["a.py"], ["zzz"])]}
    server.add([reply("Here is my plan: first a, then b."), reply(json.dumps(bad))], session="planner")
    with pytest.raises(
        SplitError, match=r"planner failed: invalid answer after one retry.*unknown subtask zzz"
    ) as err:
        await run_split(rt, "build it", yes)
    assert err.value.code == 3 and len(server.requests) == 2


def test_overlapping_paths_are_put_in_sequence_and_dependencies_kept() -> None:
    plan = Plan.model_validate(
        {"subtasks": [task("b", ["src/app.py"], ["c"]), task("a", ["src/"]), task("c", ["docs/x.md"])]}
    )
    order = schedule(plan)
    assert order.order == ("a", "c", "b")
    assert order.after == {"a": frozenset(), "c": frozenset(), "b": frozenset({"a", "c"})}
    assert order.overlaps == (("a", "b"),)


async def test_overlapping_subtasks_run_in_sequence_into_one_integration_lane(
    server: ReplayServer, runtime: MakeRuntime, repo: Path
) -> None:
    rt, sink = await runtime(repo, max_parallel_turns=4)
    plan = {"subtasks": [task("a", ["app.py"]), task("b", ["app.py"]), task("c", ["docs/"])]}
    server.add(reply(json.dumps(plan)), session="planner")
    first = "def hello():\n    return 2\n"
    second = first + "\n\ndef bye():\n    return 3\n"
    server.add([reply(tool_calls=[write("w1", "app.py", first)]), reply("a done")], session="split-1-a")
    server.add([reply(tool_calls=[write("w2", "app.py", second)]), reply("b done")], session="split-1-b")
    server.add([reply(tool_calls=[write("w3", "docs/x.md", "# x\n")]), reply("c done")], session="split-1-c")
    sink.answers.extend([PermissionAnswer("allow_once")] * 3)
    result = await run_split(rt, "build it", yes)
    assert result is not None and result.integration is not None
    assert result.schedule.overlaps == (("a", "b"),)
    assert {r.id: r.status for r in result.results} == {"a": "merged", "b": "merged", "c": "merged"}
    sessions = [r.session for r in server.requests]
    last_a = max(i for i, s in enumerate(sessions) if s == "split-1-a")
    first_b = sessions.index("split-1-b")
    assert last_a < first_b  # b started only after a finished
    assert sessions.index("split-1-c") < first_b  # c did not wait for a
    integration = Path(result.integration.path)
    assert (integration / "app.py").read_text() == second and (
        integration / "docs/x.md"
    ).read_text() == "# x\n"
    assert "+def bye():" in result.diff and "+# x" in result.diff
    assert (repo / "app.py").read_text() == "def hello():\n    return 1\n"  # main checkout untouched
    assert sh(repo, "status", "--porcelain") == ""
    # released when each subtask ended (a lane's port block stays while the lane lives)
    assert [r for r in await rt.store.reservations.all() if r.kind != "port"] == []
