"""``eval run --replay DIR``: run a recorded run again without any model and check that it scores the
same (docs/eval.md, "Reproducible").

Each model target is served by its own loopback :class:`~paragents.llm.replay.ReplayServer` holding
every trial's recorded replies, routed by session name (a trial's sessions have the same names in
every run). Everything else is as recorded: the task set (read again from where it was), the targets'
model settings and the config subset of the manifest, the trials, fan-out, mode, budget and the answer
policy (a script's rules are kept in the manifest). The engine, the tools, the sandbox and the hidden
tests all run for real, so a change to the agent loop, the policy, the tools or a task that changes an
outcome changes the score. An external agent's trials cannot be played from a cassette: they are
re-scored from their recorded evidence (``replayed: evidence``). The scores compared are each trial's
:meth:`~paragents.eval.results.TrialResult.score_key` (times and output tails excluded). Nothing here
imports Textual."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paragents import events as ev
from paragents.cassette import CassetteError, Reply, load_cassette
from paragents.eval.answers import AnswerPolicy, parse_script
from paragents.eval.errors import EvalError
from paragents.eval.loader import load_tasks
from paragents.eval.results import RunResults, TrialResult, load_results
from paragents.eval.runner import Endpoint, Progress, RunOptions, run_eval
from paragents.eval.targets import Target
from paragents.llm.replay import ReplayServer, ScriptedResponse


@dataclass(frozen=True)
class ReplayOutcome:
    """The replayed run and, per trial whose scores differ, the fields that differ (recorded, now)."""

    results: RunResults
    differences: dict[str, dict[str, tuple[Any, Any]]]
    out: Path

    @property
    def identical(self) -> bool:
        return not self.differences


def next_replay_dir(recorded: Path) -> Path:
    """``DIR/replays/N`` with the first N not used yet."""
    n = 1
    while (recorded / "replays" / str(n)).exists():
        n += 1
    return recorded / "replays" / str(n)


def differences(recorded: RunResults, replayed: RunResults) -> dict[str, dict[str, tuple[Any, Any]]]:
    """Per trial name, the score fields that differ between the two runs (a missing trial included)."""
    before = {t.name: t.score_key() for t in recorded.trials}
    after = {t.name: t.score_key() for t in replayed.trials}
    found: dict[str, dict[str, tuple[Any, Any]]] = {}
    for name in sorted(set(before) | set(after)):
        a, b = before.get(name), after.get(name)
        if a is None or b is None:
            found[name] = {"trial": ("recorded" if a else "missing", "replayed" if b else "missing")}
            continue
        changed = {k: (a[k], b.get(k)) for k in a if a[k] != b.get(k)}
        if changed:
            found[name] = changed
    return found


@contextlib.contextmanager
def same_path(recorded_dir: Path, recorded_out: str | None, target: Path) -> Iterator[Path]:
    """Where the replay runs: the recorded run's own path when it can be had, so that every path the
    agent sees (its lane's, in the system prompt) is the same and a locally estimated token count
    (an endpoint that reports no usage) comes out the same; the result is then moved to ``target``.
    The recorded run's directory, when it is that path, is set aside under a hidden name meanwhile and
    always put back. Without such a path (taken by something else), the replay runs in ``target``."""
    work = Path(recorded_out) if recorded_out else None
    if work is None or work.resolve() == target.resolve():
        yield target
        return
    parked: Path | None = None
    if work.exists():
        if work.resolve() != recorded_dir.resolve():
            yield target
            return
        parked = recorded_dir.with_name(f".{recorded_dir.name}.set-aside-{os.getpid()}")
        recorded_dir.rename(parked)
    try:
        yield work
    finally:
        done = work.with_name(f".{work.name}.replayed-{os.getpid()}") if work.exists() else None
        if done is not None:
            work.rename(done)
        if parked is not None:
            parked.rename(recorded_dir)
        if done is not None:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(done, target)


class StallWatch:
    """Knows when a recorded turn that ran into the agent's timeout has been replayed to the point the
    timeout cut it: every recorded read served (the server then holds the connection, as the endpoint
    did) and the session's streamed text ends with what the recording saw streamed. The trial then
    ends as a timeout at once instead of waiting the timeout out again."""

    def __init__(self) -> None:
        self.served: dict[str, asyncio.Event] = {}
        self.want: dict[str, str] = {}
        self.streamed: dict[str, str] = {}
        self.delta: dict[str, asyncio.Event] = {}

    def gate(self, reply: Reply, session: str) -> ScriptedResponse:
        """The recorded reply as the server plays it; a reply the recording cut off gets a gate after
        its last read that marks it served."""
        response = reply.to_scripted()
        if reply.cancel:
            self.want[session] = reply.cancel_after_text
            response.reads.append("")  # a gate after the last real read: "everything was sent"
            last = len(response.reads) - 1
            served = self.served.setdefault(session, asyncio.Event())

            async def gate(i: int) -> None:
                if i == last:
                    served.set()

            response.before_read = gate
        return response

    def attach(self, rt: Any) -> None:
        """Follow ``rt``'s streamed text per session name."""

        def observe(event: ev.Event) -> None:
            if isinstance(event, ev.TextDelta | ev.ReasoningDelta):
                view = rt.sessions.get(event.session_id)
                if view is not None:
                    self.streamed[view.name] = self.streamed.get(view.name, "") + event.text
                    waiting = self.delta.get(view.name)
                    if waiting is not None:
                        waiting.set()

        rt.observe(observe)

    async def stalled(self, name: str) -> None:
        """Return once session ``name``'s cut-off reply has been replayed (never, for one without)."""
        if name not in self.want:
            await asyncio.Event().wait()
        await self.served.setdefault(name, asyncio.Event()).wait()
        while not self.streamed.get(name, "").endswith(self.want[name]):
            self.delta[name] = asyncio.Event()
            await self.delta[name].wait()


def _policy(answer: dict[str, Any], where: str) -> AnswerPolicy:
    name = str(answer.get("name", "deny"))
    if name == "script":
        return AnswerPolicy(
            "script", parse_script(answer.get("script", {}), f"{where}: manifest.answer.script")
        )
    if name not in ("deny", "allow-safe"):
        raise EvalError(f"{where}: manifest.answer.name {name!r} is not deny, allow-safe or script")
    return AnswerPolicy(name)


async def replay_run(
    recorded_dir: Path,
    out: Path | None = None,
    progress: Progress | None = None,
    lanes: dict[str, Any] | None = None,
) -> ReplayOutcome:
    """Replay the run recorded in ``recorded_dir`` into ``out`` (default ``DIR/replays/N``) and compare
    its scores with the recorded ones; ``lanes``: this machine's lane settings, for a run recorded
    ``--on container|k8s`` (its engine or cluster). EvalError for a run that cannot be replayed."""
    recorded = load_results(recorded_dir)
    m = recorded.manifest
    where = str(recorded_dir / "results.json")
    source = "sample" if m.tasks == "sample" else m.task_source
    tasks = load_tasks(source).only(m.task_ids)
    targets = [Target(t.label, t.kind, t.name, i) for i, t in enumerate(m.targets, 1)]
    carried: dict[str, TrialResult] = {}
    stalls = StallWatch()
    servers: dict[str, ReplayServer] = {}
    async with contextlib.AsyncExitStack() as stack:
        endpoints: dict[str, Endpoint] = {}
        for target in targets:
            trials = [t for t in recorded.trials if t.target == target.label]
            if target.kind == "agent":
                carried.update({t.name: t for t in trials})
                continue
            server = await stack.enter_async_context(ReplayServer(models=[target.name]))
            servers[target.label] = server
            for trial in trials:
                if not trial.cassette:
                    continue
                try:
                    cassette = load_cassette(recorded_dir / trial.cassette)
                except CassetteError as exc:
                    raise EvalError(f"trial {trial.name}: {exc}") from None
                for spec in cassette.sessions:
                    server.add([stalls.gate(r, spec.name) for r in spec.replies], session=spec.name)
            endpoints[target.label] = Endpoint(server.base_url, retry_base_delay=0.001)
        target_dir = (out or next_replay_dir(recorded_dir)).resolve()
        place = stack.enter_context(same_path(recorded_dir, m.out, target_dir))
        options = RunOptions(
            tasks=tasks,
            tasks_spec=m.tasks,
            targets=targets,
            out=place,
            policy=_policy(m.answer, where),
            endpoints=endpoints,
            shaping=dict(m.config),
            trials=m.trials,
            fanout=m.fanout,
            mode=m.mode,
            max_budget=m.max_budget,
            parallel=m.parallel,
            on=m.on,
            rules={k: list(v) for k, v in m.rules.items()},
            replay_of=str(recorded_dir),
            carried=carried,
            stalled=stalls.stalled,
            attach=stalls.attach,
            lanes=dict(lanes or {}),
        )
        replayed = await run_eval(options, progress)
    return ReplayOutcome(replayed, differences(recorded, replayed), target_dir)
