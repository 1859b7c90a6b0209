"""``paragents fanout`` (a best-of-N, headless) and ``paragents runs list | show ID`` (the evidence
fan-outs left in the store). Exit codes of ``fanout``: see :mod:`paragents.fanout.errors` and
docs/fanout.md."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.text import Text

from paragents import paths
from paragents.cli import review
from paragents.cli.open_runtime import OpenFailed, open_runtime, project_dir_of


def add_parser(sub: Any, add_common: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add ``fanout`` and ``runs`` to the top-level subparsers ``sub``; ``add_common`` adds the options
    every command shares (``--dir``, ``--model``, ``--endpoint``, ``--allow``...)."""
    fan = sub.add_parser("fanout", help="one prompt to N sibling sessions in lanes; compare their evidence")
    add_common(fan)
    fan.set_defaults(fanout_run=run_fanout_command)
    fan.add_argument("--n", type=int, default=3, metavar="N", help="how many siblings (default 3)")
    fan.add_argument("--models", metavar="A,B", help="models the siblings use in turn")
    fan.add_argument("--verify", metavar="CMD", help="command run in each candidate's lane when it finishes")
    fan.add_argument(
        "--on", metavar="WHERE", help="where the lanes run: local, container, k8s (default: lanes.backend)"
    )
    fan.add_argument("--judge", action="store_true", help="ask a judge to rank the candidates (advice)")
    fan.add_argument("--judge-model", metavar="M", help="the judge's model (default: fanout.judge_model)")
    fan.add_argument("--output", choices=("rich", "json", "patch"), default="rich")
    mode = fan.add_mutually_exclusive_group()
    mode.add_argument(
        "--review",
        nargs="?",
        const="",
        default=None,
        metavar="LIST",
        help="read-only specialist review of git diff BASE instead (e.g. security,test; default all)",
    )
    mode.add_argument(
        "--split", action="store_true", help="plan subtasks, run them in lanes, collect one integration lane"
    )
    fan.add_argument("--base", default=None, help="review: git diff BASE (default HEAD); split: the base")
    fan.add_argument("--patch", action="store_true", help="review: ask for one patch, checked with git apply")
    fan.add_argument("--yes", action="store_true", help="split: run the plan without asking")
    fan.add_argument(
        "prompt", nargs="?", default=None, help="the prompt every sibling gets ('-' reads it from stdin)"
    )

    runs = sub.add_parser("runs", help="the evidence of fan-outs: list, or show one")
    runs.set_defaults(fanout_run=run_runs_command)
    rsub = runs.add_subparsers(dest="runs_command", required=True)
    ls = rsub.add_parser("list", help="fan-out runs (best_of, review, split) of this project, newest first")
    ls.add_argument("--dir", metavar="PATH")
    ls.add_argument("--all", action="store_true", help="groups of every project")
    ls.add_argument("--json", action="store_true")
    show = rsub.add_parser(
        "show", help="one run's evidence (id or a unique prefix): best-of-N, review or split"
    )
    show.add_argument("id")
    show.add_argument("--dir", metavar="PATH")
    show.add_argument("--json", action="store_true")


def run_fanout_command(args: argparse.Namespace) -> int:
    """``paragents fanout``: best-of-N, or ``--review LIST`` / ``--split`` (paragents.cli.review)."""
    if args.review is not None:
        if args.prompt:
            print("paragents fanout --review takes no prompt (it reviews git diff BASE)", file=sys.stderr)
            return 2
        return review.fanout_review(args)
    if args.prompt == "-":
        args.prompt = sys.stdin.read()
    if not args.prompt:
        print("paragents fanout: give the prompt (or --review LIST)", file=sys.stderr)
        return 2
    if args.split:
        return review.fanout_split(args)
    return asyncio.run(_fanout(args))


async def _fanout(args: argparse.Namespace) -> int:
    # deferred: start-up (`paragents --help` imports this module)
    from paragents.fanout.errors import FanoutError
    from paragents.fanout.headless import run_fanout
    from paragents.fanout.host import FanoutHost
    from paragents.fanout.request import FanoutRequest

    prog = "paragents fanout"
    try:
        project = project_dir_of(args, prog)
        opened = await open_runtime(args, project, prog=prog, require_config=True, require_model=True)
    except OpenFailed as exc:
        return exc.code
    rt = opened.api
    rt.set_sink(lambda event: None)  # nothing streams to the terminal; asks: headless.refuse_asks
    models = tuple(m.strip() for m in (args.models or "").split(",") if m.strip())
    request = FanoutRequest(
        args.n, args.prompt, models, args.verify, args.judge, args.judge_model, getattr(args, "mode", None),
        on=getattr(args, "on", None),
    )  # fmt: skip
    try:
        outcome = await run_fanout(FanoutHost.of(opened), request)
    except FanoutError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return exc.exit_code
    except Exception as exc:  # a runtime failure: one line, exit 1
        print(f"{prog}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    finally:
        await rt.shutdown()
    cmp, code = outcome.comparison, outcome.code
    if args.output == "json":
        data = {**cmp.as_dict(), "chosen": outcome.chosen.name if outcome.chosen else None}
        print(json.dumps({**data, "exit_code": code, "reason": outcome.reason}, indent=2))
    elif args.output == "patch":
        if outcome.chosen is not None and code in (0, 4):
            sys.stdout.write(outcome.chosen.record.patch or "")
    else:
        print_comparison(Console(soft_wrap=True), cmp.as_dict())
        if outcome.chosen is not None:
            Console().print(Text(f"best by evidence: {outcome.chosen.name}", style="bold"))
    if outcome.reason:
        print(f"{prog}: {outcome.reason}", file=sys.stderr)
    print(f"{prog}: evidence kept: paragents runs show {cmp.group.id}", file=sys.stderr)
    return code


def print_comparison(out: Console, data: dict[str, Any]) -> None:
    """Print a group's evidence (``Comparison.as_dict()``) as plain lines, one block per candidate in
    evidence order (no markup: names, prompts and test ids are untrusted)."""
    group = data["group"]
    out.print(Text(f"fan-out {group['name']} ({group['id']}): {group['state']}", style="bold"))
    out.print(Text(f"prompt: {group['prompt']}"))
    if group.get("verify"):
        out.print(Text(f"verify: {group['verify']}"))
    for n, c in enumerate(data["candidates"], 1):
        v = c.get("verify") or {}
        verify = "not run" if not v else ("timeout" if v.get("timed_out") else f"exit {v.get('exit_code')}")
        ev = c.get("evidence") or {}
        over = c.get("overlaps_shown") or ""  # "1 file: #2!" (evidence order; the same count both ways)
        cost = ev.get("cost")
        line = (
            f"{n}. {c['session']}  [{c['state']}]  model {c['model']}  verify {verify}"
            f"  diff {c.get('diffstat')}"
            f"  hunks {len(c.get('hunks') or [])}  overlaps {over or '-'}  tokens {ev.get('tokens', 0)}"
            f"  cost {'-' if cost is None else f'${cost:.4f}'}  wall {ev.get('seconds', 0):.1f}s"
            f"  judge {c.get('judge_rank') or '-'}"
        )
        out.print(Text(line, style="bold" if n == 1 else ""))
        if v.get("failing"):
            out.print(Text(f"   failing: {', '.join(v['failing'])}", style="red"))
        if ev.get("error"):
            out.print(Text(f"   error: {ev['error']}", style="red"))
        for denial in ev.get("denied") or []:
            out.print(Text(f"   denied by {denial.get('by')}: {denial.get('call')}", style="yellow"))
        if c.get("judge_reason"):
            out.print(Text(f"   judge: {c['judge_reason']}"))
    if data.get("judge_error"):
        out.print(Text(data["judge_error"], style="red"))


def run_runs_command(args: argparse.Namespace) -> int:
    return asyncio.run(_runs(args))


async def _runs(args: argparse.Namespace) -> int:
    from pathlib import Path

    # deferred: start-up (`paragents --help` imports this module)
    from paragents.fanout.compare import choice_summary, compare
    from paragents.fanout.errors import FanoutError
    from paragents.store import Store, StoreError

    project = str(Path(getattr(args, "dir", None) or ".").expanduser().resolve())
    try:
        store = await Store.open(paths.db_path())
    except StoreError as exc:
        print(f"paragents runs: {exc}", file=sys.stderr)
        return 1
    try:
        if args.runs_command == "list":
            groups = await store.fanout.list_groups(None if args.all else project)
            if args.json:
                print(
                    json.dumps(
                        [{k: v for k, v in g.as_dict().items() if k != "candidates"} for g in groups],
                        indent=2,
                    )
                )
                return 0
            if not groups:
                print("no fan-out runs in this project (`paragents runs list --all` shows every project)")
            for g in groups:
                when = time.strftime("%Y-%m-%d %H:%M", time.localtime(g.created_at))
                choice = choice_summary(g)
                n = len(g.candidates)
                line = f"{g.id}  {when}  {g.kind:<8} {g.state:<10} n={n}  choice={choice}  {g.name}"
                Console(soft_wrap=True).print(Text(line))
            return 0
        stored = await store.fanout.get_group(args.id)
        if stored is not None and stored.kind in ("review", "split"):
            # deferred: start-up (`paragents --help` imports this module)
            from paragents.cli.runs_show import print_run, run_doc

            if args.json:
                print(json.dumps(run_doc(stored), indent=2))
            else:
                print_run(Console(soft_wrap=True, highlight=False), stored, choice_summary(stored))
            return 0
        try:
            cmp = await compare(store.fanout, args.id)
        except FanoutError as exc:
            print(f"paragents runs: {exc}", file=sys.stderr)
            return exc.exit_code
        if args.json:
            group = cmp.group.as_dict()
            print(
                json.dumps(
                    {
                        **cmp.as_dict(),
                        "judge": group["judge"],
                        "choice": group["choice"],
                        "patches": {c.name: c.record.patch for c in cmp.candidates},
                    },
                    indent=2,
                )
            )
        else:
            print_comparison(Console(soft_wrap=True), cmp.as_dict())
            Console(soft_wrap=True).print(Text(f"your choice: {choice_summary(cmp.group)}"))
        return 0
    finally:
        await store.close()
