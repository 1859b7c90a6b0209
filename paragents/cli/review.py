"""Headless specialist review, split and decisions (wt/fanteam):

    paragents review [security,test,...] [--base REF] [--patch] [--output rich|json|patch]
    paragents split [--yes] [--base REF] [--output rich|json|patch] PROMPT
    paragents decisions list [--search TEXT] [--json] | add TEXT

``review`` and ``split`` are :func:`fanout_review` / :func:`fanout_split`, written so that
``paragents fanout --review LIST`` / ``--split`` can call them with the same argument names
(``review``, ``split``/``prompt``, ``base``, ``output``, ``patch``, ``yes``); until that parser exists
they are their own subcommands. A permission ask has no one to answer it here: it is refused with
the reason (give rules with ``--allow``).

Exit codes (parallel-agents): 0 success, 1 runtime failure, 2 authentication/config/usage, 3
unparsable planner/specialist output or a refused plan, 4 a worker failed, 5 no patch (or nothing to
review), 6 the patch does not apply."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from paragents import paths
from paragents.cli.exit_codes import EXIT_CONFIG, EXIT_FAILURE, EXIT_OK
from paragents.cli.open_runtime import OpenFailed, open_runtime, project_dir_of

if TYPE_CHECKING:
    from paragents.fanout.host import FanoutHost

EXIT_UNPARSABLE = 3
EXIT_WORKER = 4
EXIT_NO_PATCH = 5
EXIT_PATCH_DOES_NOT_APPLY = 6


def _common(p: argparse.ArgumentParser, add_common: Callable[[argparse.ArgumentParser], None]) -> None:
    add_common(p)
    p.add_argument("--base", default=None, help="git diff BASE (review: HEAD) / the integration lane's base")
    p.add_argument("--output", choices=["rich", "json", "patch"], default="rich", help="what to print")


def add_parsers(sub: Any, add_common: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add ``review``, ``split`` and ``decisions`` to the top-level subparsers ``sub``; ``add_common``
    adds the options every engine command takes (``--dir``, ``--model``, ``--endpoint``, rules)."""
    review = sub.add_parser("review", help="read-only review of git diff BASE by specialist sessions")
    _common(review, add_common)
    review.add_argument(
        "review", nargs="?", default="", metavar="LIST", help="e.g. security,test (default: all)"
    )
    review.add_argument(
        "--patch", action="store_true", help="ask for one patch, checked with git apply --check"
    )
    review.set_defaults(fanteam_run=fanout_review)
    split = sub.add_parser("split", help="plan subtasks, run them in lanes, collect one integration lane")
    _common(split, add_common)
    split.add_argument("--yes", action="store_true", help="run the plan without asking")
    split.add_argument("prompt", help="the task")
    split.set_defaults(fanteam_run=fanout_split)
    decisions = sub.add_parser("decisions", help="project-wide decisions every session sees")
    decisions.set_defaults(fanteam_run=run_decisions)
    dsub = decisions.add_subparsers(dest="decisions_command", required=True)
    ls = dsub.add_parser("list", help="list (or search) the decisions")
    ls.add_argument("--dir", metavar="PATH")
    ls.add_argument("--search", metavar="TEXT")
    ls.add_argument("--json", action="store_true")
    add = dsub.add_parser("add", help="record a decision")
    add.add_argument("--dir", metavar="PATH")
    add.add_argument("text")


def _out(text: str) -> None:
    from rich.console import Console
    from rich.text import Text

    Console(soft_wrap=True, highlight=False).print(Text(text))


def _refuse_asks(event: Any) -> None:
    # deferred: start-up (`paragents --help` imports this module)
    from paragents import events as ev
    from paragents.terminal_text import show_controls

    if isinstance(event, ev.PermissionRequested) and not event.reply.done():
        said = show_controls(f"{event.summary}: {event.reason}")  # ESC as "␛": nothing reaches the terminal
        print(f"refused (no one to ask headless): {said}", file=sys.stderr)
        event.reply.set_result(ev.PermissionAnswer("reject_once", note="no terminal to ask", headless=True))


async def _open(args: argparse.Namespace, prog: str) -> FanoutHost:
    # deferred: start-up (`paragents --help` imports this module)
    from paragents.fanout.host import FanoutHost

    opened = await open_runtime(args, project_dir_of(args, prog), prog=prog, require_model=True)
    opened.api.set_sink(_refuse_asks)
    return FanoutHost.of(opened)


def fanout_review(args: argparse.Namespace) -> int:
    """``paragents review LIST`` / ``paragents fanout --review LIST``; returns the exit code."""
    try:
        return asyncio.run(_review(args))
    except OpenFailed as exc:
        return exc.code


async def _review(args: argparse.Namespace) -> int:
    # deferred: start-up (`paragents --help` imports this module)
    from paragents.fanout.review import ReviewError, ReviewRequest, run_review
    from paragents.fanout.specialists import parse_list

    host = await _open(args, "paragents review")
    want_patch = bool(getattr(args, "patch", False)) or args.output == "patch"
    request = ReviewRequest(parse_list(args.review), base=args.base or "HEAD", patch=want_patch)
    try:
        report = await run_review(host, request)
    except ReviewError as exc:
        if args.output == "json":
            print(json.dumps({"error": str(exc), "exit_code": exc.code}))
        print(f"paragents review: {exc}", file=sys.stderr)
        return exc.code
    except Exception as exc:  # the endpoint, the store, git: a runtime failure, said plainly
        print(f"paragents review: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    finally:
        await host.rt.shutdown()
    code = EXIT_WORKER if report.failed else EXIT_OK
    if report.group_id:
        print(f"paragents review: evidence kept: paragents runs show {report.group_id}", file=sys.stderr)
    if args.output == "patch":
        if report.patch is None:
            print(f"paragents review: {report.patch_error or 'no patch'}", file=sys.stderr)
            return (
                EXIT_PATCH_DOES_NOT_APPLY if "does not apply" in (report.patch_error or "") else EXIT_NO_PATCH
            )
        sys.stdout.write(report.patch)
        return code
    if args.output == "json":
        print(json.dumps({**report.model_dump(mode="json"), "exit_code": code}, indent=2))
    else:
        for line in report.lines():
            _out(line)
    return code


def fanout_split(args: argparse.Namespace) -> int:
    """``paragents split PROMPT`` / ``paragents fanout --split PROMPT``; returns the exit code."""
    try:
        return asyncio.run(_split(args))
    except OpenFailed as exc:
        return exc.code


async def _split(args: argparse.Namespace) -> int:
    # deferred: start-up (`paragents --help` imports this module)
    from paragents.fanout.split import Plan, Schedule, SplitError, run_split

    host = await _open(args, "paragents split")

    async def approve(plan: Plan, order: Schedule) -> bool:
        for line in order.describe(plan):
            print(f"plan: {line}", file=sys.stderr)
        if getattr(args, "yes", False):
            return True
        if not sys.stdin.isatty():
            print("paragents split: the plan was not approved (pass --yes to run it)", file=sys.stderr)
            return False
        answer = await asyncio.to_thread(input, "run this plan? [y/N] ")
        return answer.strip().lower() in ("y", "yes")

    try:
        result = await run_split(host, args.prompt, approve, base=args.base or "head", mode=args.mode)
    except SplitError as exc:
        print(f"paragents split: {exc}", file=sys.stderr)
        return exc.code
    except Exception as exc:
        print(f"paragents split: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    finally:
        await host.rt.shutdown()
    if result is None:
        return EXIT_CONFIG
    code = EXIT_WORKER if result.failed else EXIT_OK
    if result.group_id:
        print(f"paragents split: evidence kept: paragents runs show {result.group_id}", file=sys.stderr)
    if args.output == "patch":
        if not result.diff:
            print("paragents split: the integration lane has no changes", file=sys.stderr)
            return EXIT_NO_PATCH
        sys.stdout.write(result.diff)
        return code
    lane = result.integration
    if args.output == "json":
        doc = {
            "plan": result.plan.model_dump(mode="json"),
            "order": list(result.schedule.order),
            "after": {k: sorted(v) for k, v in result.schedule.after.items()},
            "integration": {"lane": lane.name, "branch": lane.branch, "path": lane.path} if lane else None,
            "results": [vars(r) for r in result.results],
            "diff": result.diff,
            "exit_code": code,
        }
        print(json.dumps(doc, indent=2))
        return code
    for r in result.results:
        _out(f"{r.id}: {r.status}" + (f" ({r.detail})" if r.detail else ""))
    if lane is not None:
        _out(
            f"integration lane {lane.name} (branch {lane.branch}): "
            f"review it with `paragents lanes diff {lane.name}`"
        )
    return code


def run_decisions(args: argparse.Namespace) -> int:
    """``paragents decisions list|add``; returns the exit code."""
    return asyncio.run(_decisions(args))


async def _decisions(args: argparse.Namespace) -> int:
    # deferred: start-up (`paragents --help` imports this module)
    from paragents.sessions.decisions import decision_line
    from paragents.store import Store, StoreError

    try:
        project = project_dir_of(args, "paragents decisions")
    except OpenFailed as exc:
        return exc.code
    store = await Store.open(paths.db_path())
    try:
        if args.decisions_command == "add":
            try:
                await store.decisions.add(project, args.text, author="paragents decisions add")
            except StoreError as exc:
                print(f"paragents decisions: {exc}", file=sys.stderr)
                return EXIT_CONFIG
            _out("decision recorded: every session of the project sees it from its next request")
            return EXIT_OK
        found = await store.decisions.all(project, args.search)
    finally:
        await store.close()
    if args.json:
        print(
            json.dumps(
                [{"id": d.id, "text": d.text, "author": d.author, "created_at": d.created_at} for d in found]
            )
        )
    elif not found:
        _out("no decisions yet: paragents decisions add TEXT (or /decide TEXT in a session)")
    for d in found if not args.json else []:
        _out(f"{d.id}. {decision_line(d)}")
    return EXIT_OK
