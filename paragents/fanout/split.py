"""Split (``/split PROMPT``, ``paragents fanout --split``): a planner request returns subtasks with the
paths each will touch and their dependencies (a JSON schema, pydantic-validated, retried once); the
plan is shown for approval; subtasks run in lanes under the scheduler, those whose paths overlap in
sequence and the rest in parallel, in a topological order of their dependencies (a cycle is refused
with a message naming it; a dependency is never dropped); each subtask's declared paths are reserved
while it runs, and each finished subtask is merged into one integration lane the user reviews as a
single diff. Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from paragents.config import SessionProfile
from paragents.conflicts import paths_overlap
from paragents.fanout.asking import WorkerFailed, ask_json, close_workers, open_worker, run_turn
from paragents.fanout.group import slugify
from paragents.fanout.recording import add_member, finish_group, merge_settings, open_group, record_choice
from paragents.lanes import LaneError, create_lane, git, unique_lane_name
from paragents.sessions import Runtime, SessionView
from paragents.store import LaneRecord

PLANNER = SessionProfile(
    description="splits a task into subtasks with the paths each touches",
    system_prompt=(
        "You plan work for several coding agents working at once, each in its own git worktree. Read the "
        "project as needed (you cannot change it), then split the user's task into a few independent "
        "subtasks. For each give an id (lower-case letters, digits, '-'), a title, the prompt its agent "
        "gets, the paths (files or directories, relative to the repository root) it will change, and the "
        "ids of the subtasks it depends on (they must finish first)."
    ),
)
"""The planner's profile: read-only, the read tools."""


class Subtask(BaseModel):
    """One subtask of a plan (the planner's JSON answer)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,30}$", description="Short id: lower-case, digits, '-'.")
    title: str = Field(min_length=1, max_length=200, description="One line saying what it does.")
    prompt: str = Field(min_length=1, description="The prompt its agent gets.")
    paths: list[str] = Field(min_length=1, description="Files or directories it will change (repo-relative).")
    depends_on: list[str] = Field(default_factory=list, description="Ids of subtasks that must finish first.")


class Plan(BaseModel):
    """The planner's answer: ``{"subtasks": [...]}``. Ids are unique and every dependency names a
    subtask of the plan (else the answer is invalid and retried)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    subtasks: list[Subtask] = Field(min_length=1, max_length=12)

    @model_validator(mode="after")
    def _check_ids(self) -> Plan:
        ids = [t.id for t in self.subtasks]
        duplicate = sorted({i for i in ids if ids.count(i) > 1})
        if duplicate:
            raise ValueError(f"subtask ids must be unique: {', '.join(duplicate)} used twice")
        for task in self.subtasks:
            unknown = [d for d in task.depends_on if d not in ids]
            if unknown:
                raise ValueError(f"subtask {task.id} depends on unknown subtask {', '.join(unknown)}")
        return self


class SplitError(Exception):
    """A split that cannot run; ``code`` is the headless exit code (1 runtime, 2 config, 3 planner
    answer unusable or plan refused, 4 a subtask failed)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Schedule:
    """How a plan runs: ``order`` (a topological order) and ``after[id]``, the subtasks that must finish
    before ``id`` starts: its dependencies plus the earlier subtasks whose paths overlap its own."""

    order: tuple[str, ...]
    after: dict[str, frozenset[str]]
    overlaps: tuple[tuple[str, str], ...]
    """``(earlier, later)`` pairs put in sequence because their paths overlap."""

    def describe(self, plan: Plan) -> list[str]:
        """Readable lines: each subtask, its paths and what it waits for."""
        tasks = {t.id: t for t in plan.subtasks}
        lines = []
        for tid in self.order:
            waits = ", ".join(sorted(self.after[tid])) or "nothing (starts at once)"
            lines.append(f"{tid}: {tasks[tid].title} [{', '.join(tasks[tid].paths)}] after {waits}")
        for first, second in self.overlaps:
            lines.append(f"{first} and {second} touch the same paths, so {second} runs after {first}")
        return lines


def find_cycle(plan: Plan) -> list[str] | None:
    """A dependency cycle of the plan as ids (first repeated at the end), or None."""
    deps = {t.id: t.depends_on for t in plan.subtasks}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in deps[node]:
            if state.get(dep) == 1:
                return [*stack[stack.index(dep) :], dep]
            if dep not in state and (found := visit(dep)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for task in plan.subtasks:
        if task.id not in state and (cycle := visit(task.id)):
            return cycle
    return None


def _repo_paths_overlap(a: str, b: str) -> bool:
    def norm(p: str) -> str:
        return "/" + p.strip().lstrip("./").rstrip("/")

    return paths_overlap(norm(a), norm(b))


def schedule(plan: Plan) -> Schedule:
    """Order the plan: dependencies first (stable: plan order among the ready ones), then subtasks whose
    paths overlap in that order, one after the other. Raises SplitError (3) naming a dependency cycle,
    e.g. ``a -> b -> a``."""
    cycle = find_cycle(plan)
    if cycle is not None:
        # each id depends on the next one: "api depends on db, which depends on api"
        raise SplitError(
            "the plan is refused: its dependencies form a cycle "
            + " -> ".join(cycle)
            + " (each depends on the next); no dependency was dropped, so nothing ran",
            3,
        )
    tasks = {t.id: t for t in plan.subtasks}
    done: list[str] = []
    while len(done) < len(tasks):
        ready = next(t.id for t in plan.subtasks if t.id not in done and set(t.depends_on) <= set(done))
        done.append(ready)
    after = {tid: set(tasks[tid].depends_on) for tid in done}
    overlaps: list[tuple[str, str]] = []
    for i, first in enumerate(done):
        for second in done[i + 1 :]:
            if any(_repo_paths_overlap(a, b) for a in tasks[first].paths for b in tasks[second].paths):
                if first not in after[second]:
                    overlaps.append((first, second))
                after[second].add(first)
    return Schedule(tuple(done), {k: frozenset(v) for k, v in after.items()}, tuple(overlaps))


SubtaskStatus = Literal["merged", "no changes", "failed", "skipped"]


@dataclass
class SubtaskResult:
    """What became of a subtask: its session and lane, status, and the reason when it failed."""

    id: str
    status: SubtaskStatus
    session: str = ""
    lane: str = ""
    detail: str = ""


@dataclass
class SplitResult:
    """The outcome: the plan, its schedule, the integration lane (None when nothing ran), each
    subtask's result in the order they finished, and the integration lane's diff against its base."""

    plan: Plan
    schedule: Schedule
    integration: LaneRecord | None = None
    results: list[SubtaskResult] = field(default_factory=list)
    diff: str = ""
    group_id: str | None = None
    """The fan-out group this split is kept as (``paragents runs show ID``)."""

    @property
    def failed(self) -> list[SubtaskResult]:
        return [r for r in self.results if r.status in ("failed", "skipped")]


Approve = Callable[[Plan, Schedule], Awaitable[bool]]


async def ask_plan(
    rt: Runtime,
    prompt: str,
    on_open: Callable[[SessionView], Any] | None = None,
    *,
    keep_sessions: bool = False,
) -> Plan:
    """Ask the planner for a plan (retried once when invalid). Raises SplitError (3) for an unusable
    answer, (1) when the planner's turn failed. The planner session is closed afterwards unless
    ``keep_sessions`` (the TUI keeps its panel)."""
    view = await open_worker(rt, "planner", PLANNER, schema=Plan.model_json_schema(), on_open=on_open)
    try:
        return await ask_json(rt, view, f"Split this task into subtasks:\n\n{prompt}", Plan)
    except WorkerFailed as exc:
        code = 3 if str(exc).startswith("invalid answer") else 1
        raise SplitError(f"planner failed: {exc}", code) from exc
    finally:
        if not keep_sessions:
            await close_workers(rt, [view])


async def plan_split(
    rt: Runtime,
    prompt: str,
    on_open: Callable[[SessionView], Any] | None = None,
    *,
    keep_sessions: bool = False,
) -> tuple[Plan, Schedule]:
    """:func:`ask_plan`, then schedule the plan (SplitError (3) for a cycle)."""
    plan = await ask_plan(rt, prompt, on_open, keep_sessions=keep_sessions)
    return plan, schedule(plan)


def schedule_doc(order: Schedule) -> dict[str, Any]:
    """The schedule as JSON: the order, what each subtask waits for, the pairs put in sequence."""
    return {
        "order": list(order.order),
        "after": {k: sorted(v) for k, v in order.after.items()},
        "overlaps": [list(pair) for pair in order.overlaps],
    }


async def run_split(
    rt: Runtime,
    prompt: str,
    approve: Approve,
    *,
    base: str = "head",
    mode: str | None = None,
    on_open: Callable[[SessionView], Any] | None = None,
    keep_sessions: bool = False,
) -> SplitResult | None:
    """Plan, ask ``approve`` (None is returned when refused: nothing was created), then run the plan
    into a new integration lane (see the module docstring) and return the result. ``mode`` is the
    permission mode of the subtask sessions (None: the default, so their writes ask). The run is kept
    as a fan-out group of kind ``split`` (:mod:`paragents.fanout.recording`), refused or failed too."""
    fanout = rt.store.fanout
    group_id = await open_group(
        fanout,
        kind="split",
        project_dir=rt.project_dir,
        name=f"split-{slugify(prompt)}",
        prompt=prompt,
        base_ref=base,
        base_commit=None,
        settings={},
    )
    try:
        plan = await ask_plan(rt, prompt, on_open, keep_sessions=keep_sessions)
        await merge_settings(fanout, group_id, plan=plan.model_dump(mode="json"))
        order = schedule(plan)
    except SplitError as exc:
        await finish_group(fanout, group_id, "failed", error=str(exc), exit_code=exc.code)
        raise
    await merge_settings(fanout, group_id, schedule=schedule_doc(order))
    approved = await approve(plan, order)
    await record_choice(fanout, group_id, "approve plan" if approved else "refuse plan")
    if not approved:
        await finish_group(fanout, group_id, "refused")
        return None
    try:
        result = await execute(
            rt, plan, order, base=base, mode=mode, on_open=on_open, keep_sessions=keep_sessions,
            group_id=group_id,
        )  # fmt: skip
    except Exception as exc:
        code = exc.code if isinstance(exc, SplitError) else 1
        await finish_group(fanout, group_id, "failed", error=f"{exc}", exit_code=code)
        raise
    lane = result.integration
    await finish_group(
        fanout,
        group_id,
        "failed" if result.failed else "done",
        integration={
            "lane": lane.name, "branch": lane.branch, "path": lane.path, "base_commit": lane.base_commit
        } if lane else None,
        results=[vars(r) for r in result.results],
    )  # fmt: skip
    result.group_id = group_id
    return result


_SLUG = re.compile(r"[^a-z0-9-]+")


async def execute(
    rt: Runtime,
    plan: Plan,
    order: Schedule,
    *,
    base: str = "head",
    mode: str | None = None,
    on_open: Callable[[SessionView], Any] | None = None,
    keep_sessions: bool = False,
    group_id: str | None = None,
) -> SplitResult:
    """Run an approved plan: each subtask starts once everything in ``order.after`` finished, in its
    own lane based on the integration branch as it is then; its declared paths are reserved; its work
    is committed and merged into the integration lane. A failed subtask skips those that wait on it.
    With ``group_id``, each subtask is recorded as candidate (its number in the plan) of that group."""
    try:
        name = await unique_lane_name(rt.store.lanes, rt.project_dir, "split")
        made = await create_lane(rt.store, rt.project_dir, name, base, settings=rt.config.lanes, setup=False)
    except LaneError as exc:
        raise SplitError(f"cannot open the integration lane: {exc}", 1) from exc
    integration = made.lane
    result = SplitResult(plan, order, integration)
    tasks = {t.id: t for t in plan.subtasks}
    numbers = {t.id: n for n, t in enumerate(plan.subtasks, 1)}
    finished: dict[str, asyncio.Event] = {tid: asyncio.Event() for tid in order.order}
    merge_lock = asyncio.Lock()
    views: list[SessionView] = []

    async def one(tid: str) -> None:
        task = tasks[tid]
        try:
            for before in sorted(order.after[tid]):
                await finished[before].wait()
            blocked = [
                r.id for r in result.results if r.id in order.after[tid] and r.status in ("failed", "skipped")
            ]
            member = (group_id, numbers[tid]) if group_id is not None else None
            if blocked:
                outcome = SubtaskResult(tid, "skipped", detail=f"waits on {', '.join(blocked)}")
            else:
                outcome = await _run_subtask(rt, task, integration, merge_lock, views, mode, on_open, member)
            result.results.append(outcome)
            if member is not None:
                await _record_subtask(rt, member, task, outcome)
        finally:
            finished[tid].set()

    try:
        await asyncio.gather(*(one(tid) for tid in order.order))
    finally:
        if not keep_sessions:
            await close_workers(rt, views)
    result.diff = (
        await git("diff", "--no-color", integration.base_commit, "HEAD", cwd=Path(integration.path))
    ).out
    return result


async def _run_subtask(
    rt: Runtime,
    task: Subtask,
    integration: LaneRecord,
    merge_lock: asyncio.Lock,
    views: list[SessionView],
    mode: str | None,
    on_open: Callable[[SessionView], Any] | None,
    member: tuple[str, int] | None = None,
) -> SubtaskResult:
    session_name = _SLUG.sub("-", f"{integration.name}-{task.id}".lower())[:40]
    try:
        view = await open_worker(
            rt, session_name, None, lane=True, base=integration.branch, mode=mode, on_open=on_open
        )
    except Exception as exc:  # a lane or session that cannot be made: this subtask failed
        return SubtaskResult(task.id, "failed", detail=str(exc))
    views.append(view)
    if member is not None:
        await add_member(rt, member[0], member[1], view, _subtask_evidence(task))
    lane = await rt.store.lanes.of_session(view.id)
    workdir = view.workdir
    for path in task.paths:  # the declared paths are this subtask's while it runs
        target = str((workdir / path.strip().lstrip("./")).resolve())
        await rt.store.reservations.add(view.id, target, "write", reason=f"split {task.id}", pid=os.getpid())
    try:
        await run_turn(rt, view, task.prompt)
    except WorkerFailed as exc:
        return SubtaskResult(task.id, "failed", view.name, lane.name if lane else "", str(exc))
    finally:
        await rt.conflicts.release(view.id)
    lane_name = lane.name if lane else ""
    await git("add", "-A", cwd=workdir)
    if not (await git("status", "--porcelain", cwd=workdir)).out.strip():
        ahead = (await git("rev-list", "--count", f"{integration.branch}..HEAD", cwd=workdir)).out.strip()
        if ahead == "0":
            return SubtaskResult(task.id, "no changes", view.name, lane_name)
    else:
        await git("commit", "-q", "-m", f"split {task.id}: {task.title}", cwd=workdir)
    branch = (await git("rev-parse", "--abbrev-ref", "HEAD", cwd=workdir)).out.strip()
    async with merge_lock:
        merged = await git(
            "merge", "--no-ff", "--no-edit", "-m", f"split: merge {task.id} ({task.title})", branch,
            cwd=Path(integration.path), check=False,
        )  # fmt: skip
        if not merged.ok:
            await git("merge", "--abort", cwd=Path(integration.path), check=False)
            reason = merged.err or merged.out.strip()
            return SubtaskResult(
                task.id, "failed", view.name, lane_name, f"merge into {integration.name}: {reason}"
            )
    return SubtaskResult(task.id, "merged", view.name, lane_name)


def _subtask_evidence(task: Subtask, outcome: SubtaskResult | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "subtask": task.id,
        "title": task.title,
        "paths": list(task.paths),
        "depends_on": list(task.depends_on),
    }
    if outcome is not None and outcome.detail:
        doc["detail"] = outcome.detail
    return doc


async def _record_subtask(
    rt: Runtime, member: tuple[str, int], task: Subtask, outcome: SubtaskResult
) -> None:
    """Store a subtask's outcome on its candidate (one without a session is added here)."""
    group_id, idx = member
    if not outcome.session:
        await rt.store.fanout.add_candidate(
            group_id, idx, session_id=None, session_name=task.id, model="",
            lane=None, lane_path=None, branch=None,
        )  # fmt: skip
    evidence = _subtask_evidence(task, outcome)
    await rt.store.fanout.update_candidate(group_id, idx, state=outcome.status, evidence=evidence)
