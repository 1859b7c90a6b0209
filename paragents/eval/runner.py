"""``eval run``: every task × target × trial, at most ``parallel`` at once, unattended, recorded
(docs/eval.md).

The run lives in its output directory: ``work/repo`` (the eval repository, one branch per task),
``state/`` (each target's store and the lanes: the run is isolated from the user's own config, store
and permission files, like a cassette replay), ``trials/<name>/`` (cassette, diff, verifier log,
logs), and ``results.json`` (manifest and results). Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paragents.cassette.player import isolated_dirs
from paragents.cassette.recorder import CassetteRecorder
from paragents.config import ConfigError, LaneSettings
from paragents.eval.answers import Answerer, AnswerPolicy
from paragents.eval.backend import TrialBackend
from paragents.eval.choose import backend_for
from paragents.eval.errors import EXIT_FAILURE, EvalError
from paragents.eval.results import RESULTS, RunManifest, RunResults, TargetInfo, TrialResult
from paragents.eval.sandbox import SandboxUnavailable, bwrap_path
from paragents.eval.targets import Target, endpoint_label, open_target_runtime
from paragents.eval.tasks import TaskSet
from paragents.eval.trial import TrialContext, TrialSpec, run_trial, trial_name
from paragents.eval.workspace import branch_of, prepare_repo
from paragents.permissions import PolicyError

if TYPE_CHECKING:
    from paragents.sessions import Opened
    from paragents.sessions.api import SessionsAPI
    from paragents.store import Store


@dataclass
class Endpoint:
    """Where a target's requests go: URL, key (never written anywhere), extra headers, and a retry
    delay override (a replay retries at once)."""

    url: str
    api_key: str | None = None
    extra_headers: dict[str, str] = field(default_factory=dict)
    retry_base_delay: float | None = None


@dataclass
class RunOptions:
    """One ``eval run`` (see the CLI's help). ``endpoints`` maps a model target's label to its
    endpoint; ``shaping`` is the config subset each runtime gets (:mod:`paragents.eval.targets`);
    ``rules`` extra permission rules; ``open_panel`` (the TUI) shows each trial's sessions;
    ``interactive`` leaves asks an answer script marks ``ask`` to a person."""

    tasks: TaskSet
    tasks_spec: str
    targets: list[Target]
    out: Path
    policy: AnswerPolicy
    endpoints: dict[str, Endpoint]
    shaping: dict[str, Any]
    trials: int = 1
    fanout: int = 1
    mode: str | None = None
    max_budget: str | None = None
    parallel: int = 1
    on: str = "local"
    rules: dict[str, list[str]] = field(default_factory=dict)
    open_panel: bool = False
    interactive: bool = False
    replay_of: str | None = None
    carried: dict[str, TrialResult] = field(default_factory=dict)
    """Results taken as recorded instead of run (a replay's external-agent trials), by trial name."""
    stalled: Callable[[str], Awaitable[object]] | None = None
    """A replay's signal that a timed-out turn's recorded stream was served (see TrialContext)."""
    agents: dict[str, Any] = field(default_factory=dict)
    """The configured ``agents`` table with its secrets, for launching agent targets (the manifest
    keeps the shaping's redacted copy)."""
    attach: Callable[[Any], None] | None = None
    """Called with each target's runtime once it is open (a replay watches its events)."""
    lanes: dict[str, Any] = field(default_factory=dict)
    """The lane settings of a container or Pod run (``lanes.image``, ``lanes.container``,
    ``lanes.kubernetes`` of this machine's config: where the engine or cluster is). Not in the
    manifest: a replay takes this machine's."""


class Progress:
    """What a live display follows (all methods optional to override): a trial started, changed state,
    finished. ``specs`` is every trial of the run, in order."""

    def start(self, specs: list[TrialSpec]) -> None: ...
    def state(self, name: str, text: str) -> None: ...
    def finished(self, result: TrialResult) -> None: ...


@dataclass
class TargetRun:
    """A target's runtime, answerer and recorder for the duration of the run."""

    target: Target
    opened: Opened
    """The target's session layer: its API, and the store it runs on (the trials' lanes, evidence and
    fan-out groups)."""
    answerer: Answerer
    recorder: CassetteRecorder | None

    @property
    def rt(self) -> SessionsAPI:
        return self.opened.api

    @property
    def store(self) -> Store:
        return self.opened.store


def hidden_rules(tasks: TaskSet) -> list[str]:
    """Read deny rules for what the agent must not see: each task's hidden tests and oracle, and the
    task file itself for a SWE set (its lines hold the test patch and the reference patch)."""
    rules: list[str] = []
    for task in tasks.tasks:
        for path in task.hidden:
            text = str(path.resolve())
            rule = f"Read(/{text}/**)" if path.is_dir() else f"Read(/{text})"
            if rule not in rules:
                rules.append(rule)
    return rules


class EvalSession:
    """One run's setup and teardown around its trials: the checks (backend, sandbox, a fresh output
    directory), the isolated config and state (``OUT/state``), the eval repository and each target's
    runtime. ``async with EvalSession(options) as session: await session.run(progress)``; the TUI
    shows one target's runtime (:attr:`runs`) while :meth:`run` goes on."""

    def __init__(self, options: RunOptions) -> None:
        self.options = options
        self.backend = backend_for(options.on, _lane_settings(options))
        self.out = options.out.resolve()
        self.repo = self.out / "work" / "repo"
        self.runs: dict[str, TargetRun] = {}
        self.bases: dict[str, str] = {}
        self.started = 0.0
        self._stack = contextlib.ExitStack()

    async def __aenter__(self) -> EvalSession:
        if (self.out / RESULTS).exists():
            raise EvalError(
                f"--out {self.options.out}: it already holds a run ({RESULTS}); give a new directory"
            )
        self.options.tasks = await self.backend.prepare(self.options.tasks)  # where each task runs
        agents = any(t.kind == "agent" for t in self.options.targets)  # ACP agents: always local lanes
        if self.backend.needs_sandbox or agents:
            try:
                bwrap_path()
            except SandboxUnavailable as exc:
                raise EvalError(f"the hidden tests run in a sandbox, and {exc}") from None
        self.out.mkdir(parents=True, exist_ok=True)
        self.started = time.time()
        self._stack.enter_context(isolated_dirs(self.out / "state"))
        try:
            self.bases = await prepare_repo(self.repo, self.options.tasks)
            self.runs = await _open_targets(self.options, self.repo, self.out)
        except BaseException:
            self._stack.close()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            with contextlib.suppress(Exception):
                await self.backend.finish(self.repo)
            for run in self.runs.values():
                with contextlib.suppress(Exception):
                    await run.rt.shutdown()
        finally:
            self._stack.close()

    async def run(self, progress: Progress | None = None) -> RunResults:
        """Run every trial; save and return the results."""
        results = await _run_all(
            self.options, self.runs, self.backend, self.repo, self.out, self.bases, progress or Progress()
        )
        saved = RunResults(manifest=_manifest(self.options, self.started), trials=results)
        saved.save(self.out)
        return saved


async def run_eval(options: RunOptions, progress: Progress | None = None) -> RunResults:
    """Run every trial of ``options`` and return (and save) the results. Raises EvalError for what stops
    the whole run (no sandbox, the repository, a runtime that does not open)."""
    async with EvalSession(options) as session:
        return await session.run(progress)


async def _open_targets(options: RunOptions, repo: Path, out: Path) -> dict[str, TargetRun]:
    rules = {k: list(v) for k, v in options.rules.items()}
    rules.setdefault("deny", [])
    rules["deny"] += [r for r in hidden_rules(options.tasks) if r not in rules["deny"]]
    runs: dict[str, TargetRun] = {}
    per_target = options.parallel * options.fanout
    carried = {res.target for res in options.carried.values()}
    for target in options.targets:
        if target.label in carried:
            continue
        endpoint = options.endpoints.get(target.label) or Endpoint("http://127.0.0.1:9/v1")
        recorder = CassetteRecorder() if target.kind == "model" else None
        try:
            opened = await open_target_runtime(
                target,
                repo=repo,
                db=out / "state" / f"{target.tag}.db",
                shaping=options.shaping,
                agents=options.agents,
                base_url=endpoint.url,
                model=target.name if target.kind == "model" else "none",
                api_key=endpoint.api_key,
                extra_headers=endpoint.extra_headers,
                rules=rules,
                parallel=per_target,
                recorder=recorder,
                retry_base_delay=endpoint.retry_base_delay,
                lanes=options.lanes if options.on != "local" else None,
            )
        except (ConfigError, PolicyError) as exc:
            for run in runs.values():
                await run.rt.shutdown()
            raise EvalError(f"target {target.label}: {exc}") from None
        rt = opened.api
        if not options.open_panel:  # headless: events go to the observers only (the TUI sets its sink)
            rt.set_sink(lambda event: None)
        answerer = Answerer(rt, opened.store.events, options.policy, interactive=options.interactive)
        rt.observe(answerer)
        if options.attach is not None:
            options.attach(rt)
        runs[target.label] = TargetRun(target, opened, answerer, recorder)
    return runs


def _lane_settings(options: RunOptions) -> Any:
    """The :class:`~paragents.config.LaneSettings` of ``options.lanes`` (EvalError naming the field)."""
    from pydantic import ValidationError

    try:
        return LaneSettings.model_validate(options.lanes)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise EvalError(f"lanes.{'.'.join(str(p) for p in first['loc'])}: {first['msg']}") from None


def trial_specs(options: RunOptions, bases: dict[str, str]) -> list[TrialSpec]:
    """Every trial, trial number first (so a partial run has every task once before any twice)."""
    specs: list[TrialSpec] = []
    for k in range(1, options.trials + 1):
        for task in options.tasks.tasks:
            for target in options.targets:
                specs.append(
                    TrialSpec(
                        task=task,
                        target=target,
                        trial=k,
                        name=trial_name(task.id, target, k),
                        fanout=options.fanout,
                        base_ref=branch_of(task),
                        base_commit=bases[task.id],
                    )
                )
    return specs


async def _run_all(
    options: RunOptions,
    runs: dict[str, TargetRun],
    backend: TrialBackend,
    repo: Path,
    out: Path,
    bases: dict[str, str],
    progress: Progress,
) -> list[TrialResult]:
    specs = trial_specs(options, bases)
    progress.start(specs)
    gate = asyncio.Semaphore(max(1, options.parallel))
    contexts = {
        label: TrialContext(
            rt=run.rt,
            store=run.store,
            backend=backend,
            answerer=run.answerer,
            repo=repo,
            out=out,
            mode=options.mode,
            max_budget=options.max_budget,
            open_panel=options.open_panel,
            recorder=run.recorder,
            on_state=progress.state,
            stalled=options.stalled,
        )
        for label, run in runs.items()
    }

    async def one(spec: TrialSpec) -> TrialResult:
        carried = options.carried.get(spec.name)
        if carried is not None:
            result = carried.model_copy(update={"replayed": "evidence"})
        else:
            async with gate:
                progress.state(spec.name, "opening")
                result = await run_trial(contexts[spec.target.label], spec)
        progress.finished(result)
        return result

    try:
        return list(await asyncio.gather(*(one(s) for s in specs)))
    except (OSError, RuntimeError) as exc:
        raise EvalError(f"the run stopped: {exc}", EXIT_FAILURE) from None


def _manifest(options: RunOptions, started: float) -> RunManifest:
    targets = []
    models = options.shaping.get("models", {})
    for target in options.targets:
        endpoint = options.endpoints.get(target.label)
        settings = models.get(target.name, {}) if target.kind == "model" else {}
        url = endpoint_label(endpoint.url) if endpoint is not None and target.kind == "model" else None
        targets.append(TargetInfo(label=target.label, kind=target.kind, name=target.name, endpoint=url,
                                  settings=dict(settings)))  # fmt: skip
    return RunManifest(
        tasks=options.tasks_spec,
        task_source=options.tasks.source,
        task_ids=[t.id for t in options.tasks.tasks],
        targets=targets,
        trials=options.trials,
        fanout=options.fanout,
        mode=options.mode,
        max_budget=options.max_budget,
        parallel=options.parallel,
        on=options.on,
        answer=options.policy.describe(),
        config=options.shaping,
        rules=options.rules,
        task_notes={t.id: list(t.notes) for t in options.tasks.tasks if t.notes},
        started=started,
        finished=time.time(),
        replay_of=options.replay_of,
        out=str(options.out.resolve()),
    )
