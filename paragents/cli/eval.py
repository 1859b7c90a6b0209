"""``paragents eval``: run a task set across models and agents, validate it, report, compare and gate
(docs/eval.md). Exit codes: 0 done; 1 a trial or task could not run (``validate``: a task is broken);
2 bad input (task set, target, option, answer script, ``--on container|k8s``); 8 ``gate``: below a
threshold; 9 ``run --replay``: the replayed scores differ from the recorded ones."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from paragents.cli.parser import USAGE_ANSWER
from paragents.eval.compare import compare_runs, pick, render_comparison
from paragents.eval.errors import EXIT_FAILURE, EXIT_REPLAY, EvalError
from paragents.eval.gate import gate
from paragents.eval.loader import load_tasks
from paragents.eval.report import write_reports
from paragents.eval.results import load_results
from paragents.eval.scores import score_run
from paragents.eval.tables import markdown_table, summary_rows


def run_eval_command(args: argparse.Namespace) -> int:
    """Dispatch ``paragents eval ...``; return the exit code (one readable line for any EvalError)."""
    prog = f"paragents eval {args.eval_command}"
    try:
        if args.eval_command == "run":
            return _run(args, prog)
        if args.eval_command == "validate":
            return asyncio.run(_validate(args))
        if args.eval_command == "report":
            return _report(args)
        if args.eval_command == "compare":
            return _compare(args)
        return _gate(args)
    except EvalError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return exc.exit_code


def _run(args: argparse.Namespace, prog: str) -> int:
    # deferred here and below: only `eval run` loads the runtime (report, compare, gate start without it)
    from paragents.eval.progress import LiveTable

    if args.replay:
        from paragents.eval.replay import replay_run  # deferred: the runtime, as above

        if args.tasks or args.targets:
            raise EvalError(
                "--replay takes the tasks and targets of the recorded run: leave out --tasks/--targets"
            )
        lanes = _machine_lanes(args)
        with LiveTable() as table:
            outcome = asyncio.run(
                replay_run(Path(args.replay), Path(args.out) if args.out else None, table, lanes)
            )
        out = Path(args.replay)
        _finish(outcome.results, outcome.out, args)
        if not outcome.identical:
            print(f"{prog}: the replayed scores differ from the recorded ones ({out}):", file=sys.stderr)
            for name, fields in outcome.differences.items():
                shown = ", ".join(f"{k}: {a!r} -> {b!r}" for k, (a, b) in list(fields.items())[:4])
                print(f"  {name}: {shown}", file=sys.stderr)
            return EXIT_REPLAY
        print(f"replay: every score is identical to {out}'s", file=sys.stderr)
        return 0
    options = build_options(args)
    if args.tui:
        try:
            from paragents.ui.eval.hooks import run_eval_tui  # deferred: Textual, only for --tui
        except ImportError as exc:  # pragma: no cover - the TUI is always installed
            raise EvalError(f"--tui: {exc}") from None
        results = run_eval_tui(options)
        if results is None:
            where = options.out
            print(
                f"{prog}: the TUI was closed before the run ended (finished trials: {where})", file=sys.stderr
            )
            return 1
    else:
        from paragents.eval.runner import run_eval  # deferred: the runtime, as above

        with LiveTable() as table:
            results = asyncio.run(run_eval(options, table))
    _finish(results, options.out, args)
    return 0


def _finish(results: Any, out: Path, args: argparse.Namespace) -> None:
    md, page = write_reports(results, out)
    scores = score_run(results)
    if args.json:
        print(json.dumps({"out": str(out), "scores": [s.row() for s in scores]}, indent=2))
    else:
        print(markdown_table(summary_rows(scores)))
        print(f"\nreport: {md}\n        {page}")


def _machine_lanes(args: argparse.Namespace) -> dict[str, Any]:
    """This machine's lane settings (the config of ``--dir`` or here): where a replay's container or
    Pod lanes run."""
    # deferred: the config and the runtime load only for `eval run`
    from paragents.config import ConfigError, load_config
    from paragents.eval.targets import lanes_config

    project = Path(args.dir).expanduser().resolve() if args.dir else Path.cwd()
    try:
        return lanes_config(load_config(project).config)
    except ConfigError as exc:
        raise EvalError(str(exc)) from None


def build_options(args: argparse.Namespace) -> Any:
    """The :class:`~paragents.eval.runner.RunOptions` of ``eval run``'s arguments (EvalError for bad ones)."""
    # deferred: the config and the runtime load only for `eval run`
    from paragents.config import ConfigError, load_config
    from paragents.eval.answers import load_policy
    from paragents.eval.choose import backend_for
    from paragents.eval.runner import Endpoint, RunOptions
    from paragents.eval.targets import (
        agents_config,
        check_target,
        lanes_config,
        parse_targets,
        shaping_config,
    )
    from paragents.limits import BudgetError, parse_budget  # deferred: as above

    if not args.tasks or not args.targets or not args.out:
        raise EvalError(
            "give --tasks PATH|sample, --targets model:NAME[,...] and --out DIR (or --replay DIR)"
        )
    for name, value, least in (
        ("--trials", args.trials, 1),
        ("--fanout", args.fanout, 1),
        ("--parallel", args.parallel, 1),
    ):
        if value < least:
            raise EvalError(f"{name} must be at least {least}")
    if args.fanout > 8:
        raise EvalError("--fanout is at most 8 (fanout.max)")
    if args.max_budget:
        try:
            parse_budget(args.max_budget)
        except BudgetError as exc:
            raise EvalError(f"--max-budget: {exc}") from None
    if args.on not in ("local", "container", "k8s"):
        backend_for(args.on)  # the one message naming the choices
    if len(args.answer) > 2:
        raise EvalError(f"--answer takes {USAGE_ANSWER}")
    policy = load_policy(args.answer[0], args.answer[1] if len(args.answer) > 1 else None)
    project = Path(args.dir).expanduser().resolve() if args.dir else Path.cwd()
    try:
        loaded = load_config(project, {"base_url": args.endpoint} if args.endpoint else None)
    except ConfigError as exc:
        raise EvalError(str(exc)) from None
    config = loaded.config
    tasks = load_tasks(args.tasks)
    if args.task:
        tasks = tasks.only(args.task)
    targets = parse_targets(args.targets)
    for target in targets:
        check_target(target, config)
    try:
        key = config.resolve_api_key()
    except ConfigError:
        key = None
    endpoints = {
        t.label: Endpoint(t.endpoint or config.base_url, key, dict(config.extra_headers))
        for t in targets
        if t.kind == "model"
    }
    rules = {k: list(getattr(args, k)) for k in ("allow", "ask", "deny") if getattr(args, k)}
    return RunOptions(
        tasks=tasks,
        tasks_spec=args.tasks,
        targets=targets,
        out=Path(args.out),
        policy=policy,
        endpoints=endpoints,
        shaping=shaping_config(config),
        agents=agents_config(config),
        trials=args.trials,
        fanout=args.fanout,
        mode=args.mode,
        max_budget=args.max_budget,
        parallel=args.parallel,
        on=args.on,
        lanes=lanes_config(config),
        rules=rules,
        interactive=bool(args.tui),
        open_panel=bool(args.tui),
    )


async def _validate(args: argparse.Namespace) -> int:
    # deferred: its git and sandbox parts load for `eval validate` only
    from paragents.eval.validate import validate_tasks

    tasks = load_tasks(args.tasks)
    if args.task:
        tasks = tasks.only(args.task)
    found = await validate_tasks(tasks, parallel=max(1, args.parallel))
    if args.json:
        print(
            json.dumps([{"task": v.task, "ok": v.ok, "problems": list(v.problems)} for v in found], indent=2)
        )
    else:
        for v in found:
            print(f"{'ok  ' if v.ok else 'FAIL'} {v.task}" + ("" if v.ok else ": " + "; ".join(v.problems)))
        bad = sum(not v.ok for v in found)
        print(f"{len(found) - bad}/{len(found)} tasks valid", file=sys.stderr)
    return EXIT_FAILURE if any(not v.ok for v in found) else 0


def _report(args: argparse.Namespace) -> int:
    results = load_results(args.run)
    out = Path(args.out) if args.out else Path(args.run)
    out.mkdir(parents=True, exist_ok=True)
    md, page = write_reports(results, out)
    if args.json:
        print(json.dumps([s.row() for s in score_run(results)], indent=2))
    else:
        print(markdown_table(summary_rows(score_run(results))))
        print(f"\nreport: {md}\n        {page}")
    return 0


def _compare(args: argparse.Namespace) -> int:
    cmp = compare_runs(pick(args.baseline), pick(args.candidate))
    if args.json:
        data = {
            "baseline": cmp.base_score.row(),
            "candidate": cmp.cand_score.row(),
            "difference": cmp.difference,
            "ci": list(cmp.ci),
            "tasks": [{"task": t.task, "baseline": t.baseline, "candidate": t.candidate, "change": t.change}
                      for t in cmp.tasks],
        }  # fmt: skip
        print(json.dumps(data, indent=2))
    else:
        print(render_comparison(cmp), end="")
    return 0


def _gate(args: argparse.Namespace) -> int:
    result = gate(
        args.run,
        min_resolved=args.min_resolved,
        max_regression=args.max_regression,
        max_cost_per_solve=args.max_cost_per_solve,
        baseline=args.baseline,
        target=args.target,
    )
    for line in result.passed:
        print(f"pass: {line}")
    if result.reasons:
        print(f"eval gate: {result.reasons[0]}", file=sys.stderr)
        for extra in result.reasons[1:]:
            print(f"  also: {extra}", file=sys.stderr)
    return result.code
