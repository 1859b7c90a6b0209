"""One trial: a task given to one target in fresh lanes from the task's base commit, followed to its
end, then the hidden tests copied in and run in the lane's sandbox, the figures read from the store,
the diff kept as evidence and the lanes discarded (docs/eval.md, "A trial").

With ``fanout`` N the trial is a best-of-N group (the fan-out's store rows, its group budget and its
evidence order): N candidates work at once, the first in evidence order (a finished worker with a
patch, the smaller diff first) is the one the hidden tests judge. Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from paragents.eval.answers import Answerer
from paragents.eval.backend import Opening, TrialBackend, TrialLane
from paragents.eval.errors import EvalError
from paragents.eval.evidence import BurdenStore, Usage, UsageStore, burden_of, usage_of
from paragents.eval.recording import trial_cassette
from paragents.eval.results import Burden, TrialResult, Verifier
from paragents.eval.sandbox import Mount, SandboxUnavailable
from paragents.eval.targets import Target
from paragents.eval.tasks import Task
from paragents.eval.verifier import is_resolved, run_hidden_tests
from paragents.fanout.compare import compare
from paragents.fanout.evidence import commit_work, patch_of
from paragents.lanes import LaneError
from paragents.lanes.git import git
from paragents.models import TurnStatus
from paragents.store import StoreError

if TYPE_CHECKING:
    from paragents.cassette.recorder import CassetteRecorder
    from paragents.sessions.api import SessionsAPI
    from paragents.store.fanout import FanoutRepo
    from paragents.store.lanes import LanesRepo

CANCEL_WAIT = 30.0
"""Seconds to wait for a turn cancelled at the agent's timeout to end."""


class TrialStore(UsageStore, BurdenStore, Protocol):
    """The store's tables a trial uses (``paragents.store.Store`` is one): its lanes' rows (removed
    when discarded), its best-of-N group (``fanout``), and the figures' (usage and burden)."""

    @property
    def lanes(self) -> LanesRepo: ...
    @property
    def fanout(self) -> FanoutRepo: ...


@dataclass(frozen=True)
class TrialSpec:
    """Which trial: the task, the target, the trial number (1..k), the session name, the fan-out, the
    base branch and commit of the task in the eval repository."""

    task: Task
    target: Target
    trial: int
    name: str
    fanout: int
    base_ref: str
    base_commit: str


@dataclass
class TrialContext:
    """What every trial of one target shares: its runtime, the backend, the answerer, the eval
    repository, the run's output directory, the options and (when recording) the target's recorder."""

    rt: SessionsAPI
    store: TrialStore
    backend: TrialBackend
    answerer: Answerer
    repo: Path
    out: Path
    mode: str | None = None
    max_budget: str | None = None
    open_panel: bool = False
    recorder: CassetteRecorder | None = None
    on_state: Any = None
    """``on_state(name, text)``: the trial's progress (opened, working, testing...)."""
    stalled: Callable[[str], Awaitable[object]] | None = None
    """A replay's ``stalled(session name)``: resolves when the recorded replies of a turn that ran
    into the agent's timeout are all served (the server then holds the connection, as the endpoint
    did): the trial ends as a timeout at once instead of waiting the timeout out again."""
    groups: dict[str, str] = field(default_factory=dict)


def trial_name(task_id: str, target: Target, trial: int) -> str:
    """``<task>.t<target>.<trial>`` (the task id shortened with a hash when long): a session, lane and
    branch name, the same in a replay."""
    import hashlib

    base = (
        task_id if len(task_id) <= 24 else f"{task_id[:18]}-{hashlib.sha1(task_id.encode()).hexdigest()[:5]}"
    )
    return f"{base}.{target.tag}.{trial}"


def prompt_of(task: Task) -> str:
    """The prompt: the task's instruction; a Harbor task whose instruction names its container's working
    directory also gets one sentence saying that directory is the session's working directory."""
    text = task.instruction
    if task.format == "harbor" and task.workdir != "/" and task.workdir in text:
        text += (
            f"\n\n(paragents eval: this task was written for a container whose working directory is "
            f"{task.workdir}; here that directory is your current working directory: use relative paths.)"
        )
    return text


async def run_trial(ctx: TrialContext, spec: TrialSpec) -> TrialResult:
    """Run one trial to its end (see the module docstring). Never raises for the trial's own failure:
    a trial that could not run is a result with ``status`` "error"."""
    started = time.monotonic()
    lanes: list[TrialLane] = []
    base = TrialResult(name=spec.name, task=spec.task.id, target=spec.target.label, trial=spec.trial,
                       fanout=spec.fanout)  # fmt: skip
    trial_dir = ctx.out / "trials" / spec.name
    try:
        shutil.rmtree(trial_dir, ignore_errors=True)
        trial_dir.mkdir(parents=True)
        lanes = await _open(ctx, spec)
        status, error = await _work(ctx, spec, lanes)
        chosen, patches = await _choose(ctx, spec, lanes)
        for idx, patch in patches.items():
            suffix = "" if spec.fanout == 1 else f".c{idx}"
            (trial_dir / f"diff{suffix}.patch").write_text(patch, "utf-8")
        usage, burden = await _figures(ctx, lanes)
        verifier = await _verify(ctx, spec, lanes[chosen - 1], trial_dir) if chosen else None
        resolved = bool(verifier and is_resolved(verifier))
        files = await _stat(ctx, spec, lanes[chosen - 1]) if chosen else (0, 0, 0)
        cassette = _save_cassette(ctx, spec, lanes, trial_dir, cut=status == "timeout")
        return base.model_copy(
            update={
                "resolved": resolved,
                "status": status,
                "error": error,
                "tokens": usage.tokens,
                "prompt_tokens": usage.prompt,
                "completion_tokens": usage.completion,
                "estimated": usage.estimated,
                "cost": usage.cost,
                "turns": usage.requests,
                "burden": burden,
                "files_changed": files[0],
                "lines_added": files[1],
                "lines_deleted": files[2],
                "chosen": chosen if spec.fanout > 1 else None,
                "verifier": verifier or Verifier(error="no candidate left work to test"),
                "wall_seconds": round(time.monotonic() - started, 3),
                "cassette": cassette,
            }
        )
    except (EvalError, StoreError, LaneError, OSError, SandboxUnavailable) as exc:
        return base.model_copy(
            update={
                "status": "error",
                "error": str(exc),
                "wall_seconds": round(time.monotonic() - started, 3),
            }
        )
    except Exception as exc:  # one trial's surprise must not end an unattended run of hundreds
        return base.model_copy(
            update={
                "status": "error",
                "error": f"the trial failed unexpectedly ({type(exc).__name__}: {exc})",
                "wall_seconds": round(time.monotonic() - started, 3),
            }
        )
    finally:
        for lane in lanes:
            ctx.answerer.lanes.pop(lane.session_id, None)
            await ctx.backend.discard(ctx.rt, ctx.store.lanes, ctx.repo, lane)


def _state(ctx: TrialContext, name: str, text: str) -> None:
    if ctx.on_state is not None:
        ctx.on_state(name, text)


async def _open(ctx: TrialContext, spec: TrialSpec) -> list[TrialLane]:
    """Open the trial's session(s) in lanes; with a fan-out, record them as a best-of-N group."""
    names = [spec.name] if spec.fanout == 1 else [f"{spec.name}c{i}" for i in range(1, spec.fanout + 1)]
    target = spec.target
    lanes: list[TrialLane] = []
    group_id = uuid.uuid4().hex[:12] if spec.fanout > 1 else None
    store = ctx.store
    if group_id is not None:
        await store.fanout.create_group(
            group_id=group_id,
            kind="best_of",
            project_dir=str(ctx.rt.project_dir),
            name=spec.name,
            prompt=spec.task.instruction,
            base_ref=spec.base_ref,
            base_commit=spec.base_commit,
            verify=None,
            settings={"n": spec.fanout, "eval": spec.name, "models": [target.name], "rules": []},
        )
        ctx.groups[spec.name] = group_id
    try:
        for idx, name in enumerate(names, 1):
            opening = Opening(
                name=name,
                base=spec.base_ref,
                model=target.name if target.kind == "model" else None,
                agent=target.name if target.kind == "agent" else None,
                mode=ctx.mode,
                open_panel=ctx.open_panel,
                task_id=spec.task.id,
            )
            lane = await ctx.backend.open(ctx.rt, opening)
            lanes.append(lane)
            ctx.answerer.lanes[lane.session_id] = lane.path
            if ctx.max_budget:
                ctx.rt.budgets.set_budget(lane.session_id, "session", ctx.max_budget)
            if group_id is not None:
                await store.fanout.add_candidate(
                    group_id, idx, session_id=lane.session_id, session_name=name, model=target.name,
                    lane=lane.lane.name, lane_path=lane.lane.path, branch=lane.lane.branch,
                )  # fmt: skip
                ctx.rt.budgets.join_group(lane.session_id, group_id)
    except BaseException:
        for lane in lanes:
            ctx.answerer.lanes.pop(lane.session_id, None)
            await ctx.backend.discard(ctx.rt, ctx.store.lanes, ctx.repo, lane)
        raise
    _state(ctx, spec.name, "working")
    return lanes


async def _work(ctx: TrialContext, spec: TrialSpec, lanes: list[TrialLane]) -> tuple[str, str | None]:
    """Give every session the prompt and wait (at most the task's agent timeout); return the trial's
    status and error (the first candidate's when they differ: a fan-out's own status is per candidate)."""
    rt = ctx.rt
    prompt = prompt_of(spec.task)
    for lane in lanes:
        rt.submit(lane.session_id, prompt)

    async def follow(lane: TrialLane) -> tuple[str, str | None]:
        idle = asyncio.ensure_future(rt.wait_idle(lane.session_id))
        waits: set[asyncio.Future[Any]] = {idle}
        if ctx.stalled is not None:  # a replay: the recorded stream ended where the timeout cut it
            waits.add(asyncio.ensure_future(ctx.stalled(lane.name)))
        try:
            await asyncio.wait(waits, timeout=spec.task.agent_timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in waits - {idle}:
                waiting.cancel()
        if not idle.done():
            idle.cancel()
            rt.cancel(lane.session_id)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(rt.wait_idle(lane.session_id), CANCEL_WAIT)
            return (
                "timeout",
                f"the agent did not finish within {spec.task.agent_timeout:g} s ([agent] timeout_sec)",
            )
        view = rt.sessions.get(lane.session_id)
        result = view.last_result if view is not None else None
        if result is None:
            return "error", "the session ended without a result"
        if result.error_kind in ("budget", "loop"):  # stopped at a pause (a cancel): the trial failed
            return "failed", result.error
        return result.status.value, result.error if result.status is not TurnStatus.COMPLETED else None

    statuses = list(await asyncio.gather(*(follow(lane) for lane in lanes)))
    return statuses[0]


async def _choose(
    ctx: TrialContext, spec: TrialSpec, lanes: list[TrialLane]
) -> tuple[int | None, dict[int, str]]:
    """Commit each candidate's work; return the candidate to test (1-based; None when none left work)
    and each one's patch against the base."""
    patches: dict[int, str] = {}
    heads: dict[int, str] = {}
    for idx, lane in enumerate(lanes, 1):
        await ctx.backend.settle(lane)  # a container's or Pod's work comes to its worktree here first
        heads[idx] = await commit_work(lane.path, f"eval {spec.name}: candidate {idx}")
        patches[idx], files = await patch_of(ctx.repo, spec.base_commit, heads[idx])
        if spec.fanout > 1:
            group_id = ctx.groups[spec.name]
            view = ctx.rt.sessions.get(lane.session_id)
            result = view.last_result if view is not None else None
            failed = result is None or result.status is not TurnStatus.COMPLETED
            usage = await usage_of(ctx.store, ctx.rt.config, lane.session_id)
            await ctx.store.fanout.update_candidate(
                group_id,
                idx,
                state="failed" if failed else "finished",
                evidence={"files": files, "head": heads[idx], "tokens": usage.tokens, "cost": usage.cost,
                          "error": result.error if failed and result is not None else None},
                patch=patches[idx],
            )  # fmt: skip
    if spec.fanout == 1:
        return (1 if patches.get(1) is not None else None), patches
    group_id = ctx.groups[spec.name]
    cmp = await compare(ctx.store.fanout, group_id)
    best = cmp.best()
    await ctx.store.fanout.update_group(group_id, state="finished", finished=True)
    return (best.record.idx if best is not None else None), patches


async def _figures(ctx: TrialContext, lanes: list[TrialLane]) -> tuple[Usage, Burden]:
    """Usage and burden summed over the trial's sessions (from the store)."""
    usage, burden = Usage(), Burden()
    for lane in lanes:
        usage = usage + await usage_of(ctx.store, ctx.rt.config, lane.session_id)
        burden = burden + await burden_of(ctx.store, lane.session_id)
    return usage, burden


async def _stat(ctx: TrialContext, spec: TrialSpec, lane: TrialLane) -> tuple[int, int, int]:
    """Files changed, lines added, lines deleted by the tested candidate."""
    head = (await git("rev-parse", "HEAD", cwd=lane.path)).out.strip()
    _patch, files = await patch_of(ctx.repo, spec.base_commit, head)
    return len(files), sum(int(f["added"]) for f in files), sum(int(f["deleted"]) for f in files)


async def _verify(ctx: TrialContext, spec: TrialSpec, lane: TrialLane, trial_dir: Path) -> Verifier:
    """The hidden tests, copied in only now, run in the lane's sandbox through the backend."""
    _state(ctx, spec.name, "testing")

    async def run(
        command: str, mounts: list[Mount], env: dict[str, str], timeout: float, network: bool
    ) -> Any:
        return await ctx.backend.run(
            lane, spec.task, command, mounts=mounts, env=env, timeout=timeout, network=network
        )

    async def apply(patch: str) -> str | None:
        return await ctx.backend.apply_patch(lane, patch)

    return await run_hidden_tests(spec.task, lane.path, trial_dir, run, apply)


def _save_cassette(
    ctx: TrialContext, spec: TrialSpec, lanes: list[TrialLane], trial_dir: Path, *, cut: bool = False
) -> str | None:
    """Write the trial's cassette (its sessions' recorded replies and answers) and return its path
    relative to the run's directory; None when nothing records this target (an external agent)."""
    if ctx.recorder is None or spec.target.kind != "model":
        return None

    names = {lane.name for lane in lanes}
    title = f"eval trial {spec.name}: {spec.task.id} by {spec.target.label}"
    data = trial_cassette(ctx.recorder, names, title, cut=cut)
    path = trial_dir / "cassette.json"
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return str(path.relative_to(ctx.out))
