"""What an eval run writes: one :class:`TrialResult` per trial and the run's :class:`RunManifest`, kept as
JSON in ``OUT/results.json`` (docs/eval.md, "Output"). A replay compares :meth:`TrialResult.score_key`
(everything but times and output tails) with the recorded run's. Nothing here imports Textual."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from paragents import jsonfile
from paragents.eval.errors import EvalError

RESULTS = "results.json"
"""The file of a run's results in its output directory."""
FORMAT_VERSION = 1


class Burden(BaseModel):
    """The human burden of one trial, read from the store's evidence: ``asks`` (approval rows: each a
    question a person would have had to answer), ``auto_allows`` and ``denials`` (answers; denials
    also count the policy's own denials), ``left_to_person`` (asks the answer policy left to a
    person), ``conflicts`` (conflict events), ``budget_pauses`` and ``loop_guard_trips``."""

    model_config = ConfigDict(frozen=True)

    asks: int = 0
    auto_allows: int = 0
    denials: int = 0
    left_to_person: int = 0
    conflicts: int = 0
    budget_pauses: int = 0
    loop_guard_trips: int = 0

    @property
    def total(self) -> int:
        """Times a person would have been interrupted: asks, conflicts, budget pauses, loop-guard trips."""
        return self.asks + self.conflicts + self.budget_pauses + self.loop_guard_trips

    def __add__(self, other: Burden) -> Burden:
        return Burden(**{k: getattr(self, k) + getattr(other, k) for k in Burden.model_fields})


class Verifier(BaseModel):
    """How the hidden tests ran: exit code (None: stopped at the timeout or never ran), the reward and
    its metrics (Harbor's reward.txt / reward.json), the outcome per test id (SWE), seconds, output tail."""

    model_config = ConfigDict(frozen=True)

    exit_code: int | None = None
    reward: float | None = None
    metrics: dict[str, float] = Field(default_factory=dict)
    outcomes: dict[str, str] = Field(default_factory=dict)
    seconds: float = 0.0
    tail: str = ""
    error: str | None = None


class TrialResult(BaseModel):
    """One trial of one task by one target. ``status``: how the agent's turn ended (``completed``,
    ``failed``, ``cancelled``, ``timeout``) or ``error`` (the trial could not run; ``error`` says why).
    ``turns`` counts model requests; ``tokens`` prompt + completion; ``cost`` USD (None: unpriced);
    ``chosen`` the fan-out candidate whose work was tested. ``replayed``: ``run`` for a trial run
    (also when replayed against its cassette), ``evidence`` for one re-scored from its recorded
    evidence (an external agent's trial, which no cassette can play)."""

    model_config = ConfigDict(frozen=True)

    name: str
    task: str
    target: str
    trial: int
    fanout: int = 1
    resolved: bool = False
    status: str = "error"
    error: str | None = None
    tokens: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False
    cost: float | None = None
    turns: int = 0
    burden: Burden = Field(default_factory=Burden)
    files_changed: int = 0
    lines_added: int = 0
    lines_deleted: int = 0
    chosen: int | None = None
    verifier: Verifier = Field(default_factory=Verifier)
    wall_seconds: float = 0.0
    cassette: str | None = None
    replayed: Literal["run", "evidence"] = "run"

    def score_key(self) -> dict[str, Any]:
        """The fields a replay must reproduce exactly (times and output tails excluded)."""
        data = self.model_dump(exclude={"wall_seconds", "cassette", "replayed"})
        data["verifier"] = {
            k: v
            for k, v in data["verifier"].items()
            if k in ("exit_code", "reward", "metrics", "outcomes", "error")
        }
        if self.cost is not None:
            data["cost"] = round(self.cost, 9)
        return data


class TargetInfo(BaseModel):
    """A target as run: its label (``model:NAME`` / ``agent:NAME``), kind, model or agent name, the
    endpoint's host part (no key), and the model settings used (prices, context window, tools)."""

    model_config = ConfigDict(frozen=True)

    label: str
    kind: Literal["model", "agent"]
    name: str
    endpoint: str | None = None
    settings: dict[str, Any] = Field(default_factory=dict)


class RunManifest(BaseModel):
    """How a run was made, enough to replay it: the task set (``tasks``: as given; ``task_source``:
    resolved), the targets, options, the answer policy, the config subset the runtimes used, and the
    task notes (what a local lane did differently, per task)."""

    model_config = ConfigDict(frozen=True)

    version: int = FORMAT_VERSION
    tasks: str
    task_source: str
    task_ids: list[str]
    targets: list[TargetInfo]
    trials: int = 1
    fanout: int = 1
    mode: str | None = None
    max_budget: str | None = None
    parallel: int = 1
    on: str = "local"
    answer: dict[str, Any] = Field(default_factory=dict)
    config: dict[str, Any] = Field(default_factory=dict)
    rules: dict[str, list[str]] = Field(default_factory=dict)
    task_notes: dict[str, list[str]] = Field(default_factory=dict)
    started: float = 0.0
    finished: float = 0.0
    replay_of: str | None = None
    out: str | None = None
    """Where the run ran (a replay runs at the same path when it can: see paragents.eval.replay)."""


class RunResults(BaseModel):
    """``results.json``: the manifest and every trial's result (in task, target, trial order)."""

    model_config = ConfigDict(frozen=True)

    manifest: RunManifest
    trials: list[TrialResult]

    def save(self, out: Path) -> Path:
        """Write ``out/results.json`` (0600: it names endpoints) and return its path."""
        path = out / RESULTS
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n", "utf-8")
        os.chmod(tmp, 0o600)
        tmp.replace(path)
        return path

    def ordered(self) -> list[TrialResult]:
        """The trials ordered by task, target (as listed), trial number."""
        rank = {t.label: i for i, t in enumerate(self.manifest.targets)}
        return sorted(self.trials, key=lambda r: (r.task, rank.get(r.target, 99), r.trial))


def load_results(where: str | Path) -> RunResults:
    """Read a run's ``results.json`` (``where`` is the run's directory or the file). EvalError naming
    the file when it is missing or not a run's results."""
    path = Path(where)
    if path.is_dir():
        path = path / RESULTS
    try:
        data = jsonfile.load(path)
    except jsonfile.JsonFileMissing:
        raise EvalError(
            f"{where}: no eval run there (no {RESULTS}); give the --out DIR of an `eval run`"
        ) from None
    except jsonfile.JsonFileError as exc:
        raise EvalError(str(exc)) from None
    try:
        return RunResults.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise EvalError(f"{path}: {field}: {first['msg']}") from None
