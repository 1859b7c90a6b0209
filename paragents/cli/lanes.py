"""``paragents lanes list | diff NAME | merge NAME --strategy S | gc [--apply] [--force]`` (headless).

Exit codes: 0 done, 1 failure, 4 verify failed, 5 merge conflict predicted, 6 refused to remove a
lane holding unmerged work (``gc --apply`` without ``--force``)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from paragents.store import Store
    from paragents.store.lanes import LanesRepo

MERGE_HELP = """Bring lane NAME back into its target branch (the branch it was made from).

Before any strategy: the lane must have no uncommitted files (--commit commits them first);
`git merge-tree --write-tree TARGET LANE` must predict no conflict (exit 5 names the files);
lanes.verify runs in the lane's sandbox and must pass on exactly the lane's tree (exit 4; --no-verify
skips it). The target moves only from the tip that was checked.

The git commands of each strategy (TARGET's tip OLD, the lane's branch LANE):
  squash  git merge-tree --write-tree OLD LANE            -> TREE
          git commit-tree TREE -p OLD -m MSG              -> NEW
          git update-ref refs/heads/TARGET NEW OLD        (or, where TARGET is checked out:
                                                           git -C CHECKOUT merge --ff-only NEW)
  merge   git merge-tree --write-tree OLD LANE            -> TREE
          git commit-tree TREE -p OLD -p LANE -m MSG      -> NEW
          git update-ref refs/heads/TARGET NEW OLD        (or git -C CHECKOUT merge --ff-only NEW)
  rebase  git -C LANE_WORKTREE rebase OLD                 -> NEW (the rebased lane)
          git update-ref refs/heads/TARGET NEW OLD        (or git -C CHECKOUT merge --ff-only NEW)
  pr      git push -u origin LANE
          gh pr create --fill --head LANE                 (printed, not run, without gh)
--commit first runs, in the lane's worktree:
          git add -A
          git commit --no-verify -m MSG
"""


def add_parser(sub: Any) -> None:
    """Add the ``lanes`` subcommand to the top-level subparsers ``sub``, and ``--lane [NAME]`` /
    ``--base REF`` to its ``run`` subcommand when that exists."""
    run_parser = sub.choices.get("run")
    if run_parser is not None:
        run_parser.add_argument(
            "--lane",
            nargs="?",
            const=True,
            default=None,
            metavar="NAME",
            help="run a new session in its own git worktree (lane), named NAME or after the session",
        )
        run_parser.add_argument(
            "--base", metavar="REF", help="with --lane: head (default), a branch or origin/main"
        )
        run_parser.add_argument(
            "--on",
            metavar="WHERE",
            help="with --lane: where the lane runs: local, container, k8s (default: lanes.backend)",
        )
    lanes = sub.add_parser("lanes", help="list, diff, merge and clean up lanes (a git worktree per session)")
    lanes.set_defaults(lanes_run=run)
    lsub = lanes.add_subparsers(dest="lanes_command", required=True)

    def common(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument("--dir", metavar="PATH", help="a directory in the repository (default: here)")
        p.add_argument("--json", action="store_true", help="print one JSON document")
        return p

    common(lsub.add_parser("list", help="the lanes of this repository, their ports and state"))
    diff = common(lsub.add_parser("diff", help="a lane's changes against its base (untracked included)"))
    diff.add_argument("name")
    diff.add_argument("--stat", action="store_true", help="only the per-file counts")
    merge = common(
        lsub.add_parser(
            "merge",
            help="bring a lane back into its target branch",
            description=MERGE_HELP,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
    )
    merge.add_argument("name")
    merge.add_argument("--strategy", choices=["squash", "rebase", "merge", "pr"], default="squash")
    merge.add_argument("-m", "--message", help="commit message (default: drafted from the lane's commits)")
    merge.add_argument(
        "--commit",
        nargs="?",
        const="",
        default=None,
        metavar="MSG",
        help="first commit the lane's uncommitted files on its branch (git add -A; git commit --no-verify), "
        "with MSG or a message drafted from the lane's prompts",
    )
    merge.add_argument("--no-verify", action="store_true", help="skip lanes.verify (you take the risk)")
    gc = common(lsub.add_parser("gc", help="remove lanes whose work is merged; say why others stay"))
    gc.add_argument("--apply", action="store_true", help="remove them (default: only say what would happen)")
    gc.add_argument(
        "--force",
        action="store_true",
        help="with --apply: bundle unmerged work to <state>/lanes/recovery, then remove",
    )


def run(args: argparse.Namespace) -> int:
    """Run the ``lanes`` subcommand in ``args``; return the exit code."""
    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    # deferred: start-up (`paragents --help` imports this module)
    from paragents.config import ConfigError, load_config
    from paragents.lanes import LaneError
    from paragents.store import Store, StoreError

    where = Path(args.dir or ".").expanduser().resolve()
    try:
        settings = load_config(where).config.lanes
    except ConfigError as exc:
        print(f"paragents lanes: config error: {exc}", file=sys.stderr)
        return 2
    try:
        store = await Store.open()
    except StoreError as exc:
        print(f"paragents lanes: {exc}", file=sys.stderr)
        return 1
    # deferred: start-up (`paragents --help` imports this module)
    from paragents.backends.places import BackendPlaces
    from paragents.lanes.places import use_places

    use_places(BackendPlaces(lambda: settings, lambda repo, name: None))  # lanes in containers/Pods
    try:
        return await _command(args, store, where, settings)
    except LaneError as exc:
        if exc.output:
            print(exc.output, file=sys.stderr)
        print(f"paragents lanes: {exc}", file=sys.stderr)
        return exc.exit_code
    except StoreError as exc:
        print(f"paragents lanes: {exc}", file=sys.stderr)
        return 1
    finally:
        await store.close()


async def _sandbox(where: Path, name: str, lanes: LanesRepo) -> Any:
    """The sandbox of commands paragents runs in lane ``name`` (the config's sandbox mode,
    ``lanes.verify_network``, the Read deny rules of the project's permissions)."""
    # deferred: start-up (`paragents --help` imports this module)
    from paragents.config import ConfigError, load_config
    from paragents.lanes.contained import LaneSandbox
    from paragents.lanes.merge import find_lane
    from paragents.permissions import Policy, PolicyError

    repo, lane = await find_lane(lanes, where, name)
    if lane.remote:  # its container/Pod is the sandbox of paragents' commands there
        # deferred: start-up (`paragents --help` imports this module)
        from paragents.lanes.places import places_for

        return LaneSandbox(runner=places_for(lane).runner(lane))
    try:
        config = load_config(where).config
    except ConfigError:
        config = None
    try:
        rules = Policy.load(repo).read_deny_patterns(Path(lane.path))
    except PolicyError:
        rules = ()
    if config is None:
        return LaneSandbox(hidden_rules=rules)
    return LaneSandbox.from_settings(config.sandbox, config.lanes, rules)


async def _commit_first(store: Store, where: Path, name: str, message: str, echo: Any) -> None:
    """``--commit``: commit the lane's uncommitted files first, with ``message`` or one built from the
    lane's prompts (headless: no model request)."""
    # deferred: start-up (`paragents --help` imports this module)
    from paragents.lanes.bring_back import lane_state
    from paragents.lanes.commit import commit_lane
    from paragents.lanes.merge import find_lane
    from paragents.lanes.message import LaneWork, fallback_message, recent

    repo, lane = await find_lane(store.lanes, where, name)
    state = await lane_state(repo, lane)
    if state.clean:
        return
    if not message.strip():
        prompts = [t.prompt for t in await store.turns.all(lane.session_id)] if lane.session_id else []
        message = fallback_message(LaneWork(name, "commit", recent(prompts)))
    after = await commit_lane(store.lanes, where, name, message, reviewed=state)
    if echo:
        echo(f"committed the uncommitted files of lane {name} as {after.head[:12]}")


def _emit(args: argparse.Namespace, data: Any, text: str) -> None:
    print(json.dumps(data, indent=2) if args.json else text)


async def _command(args: argparse.Namespace, store: Store, where: Path, settings: Any) -> int:
    # deferred: start-up (`paragents --help` imports this module)
    from paragents.lanes.gc import gc
    from paragents.lanes.merge import EXIT_HOLDS_WORK, lane_diff, merge_lane
    from paragents.lanes.overview import lane_rows

    command = args.lanes_command
    if command == "list":
        rows = await lane_rows(store.lanes, where)
        text = "\n".join(row["line"] for row in rows) or "no lanes in this repository"
        _emit(args, [{k: v for k, v in row.items() if k != "line"} for row in rows], str(text))
        return 0
    if command in ("diff", "merge"):  # a lane in a container/Pod: its work comes here first
        # deferred: start-up (`paragents --help` imports this module)
        from paragents.lanes.merge import find_lane
        from paragents.lanes.places import fetch_if_remote

        await fetch_if_remote((await find_lane(store.lanes, where, args.name))[1])
    if command == "diff":
        lane, patch, stat = await lane_diff(store.lanes, where, args.name)
        lines = [f"{row['path']}  +{row['added']} -{row['deleted']}" for row in stat]
        body = "\n".join(lines) if args.stat else patch.rstrip("\n")
        _emit(args, {"lane": lane.name, "base": lane.base_commit, "files": stat, "patch": patch}, body)
        return 0
    if command == "merge":
        verify = None if args.no_verify else settings.verify
        echo = None if args.json else print
        if args.commit is not None:
            await _commit_first(store, where, args.name, args.commit, echo)
        result = await merge_lane(
            store,
            where,
            args.name,
            args.strategy,
            verify=verify,
            run_verify_first=True,
            message=args.message,
            on_output=echo,
            sandbox=await _sandbox(where, args.name, store.lanes),
        )
        _emit(args, result.as_dict(), "\n".join([result.summary, *result.commands]))
        return 0
    decisions = await gc(store, where, apply=args.apply, force=args.force)
    lines = []
    for d in decisions:
        why = f": {'; '.join(d.reasons)}" if d.reasons else ""
        lines.append(f"{d.action:8} {d.lane}{why}")
        if d.bundle:
            lines.append(f"         work saved in {d.bundle}; restore with:")
            lines.extend(f"           {cmd}" for cmd in d.restore)
    if not args.apply and any(d.action == "remove" for d in decisions):
        lines.append("(dry run: add --apply to remove)")
    _emit(args, [d.as_dict() for d in decisions], "\n".join(lines) or "no lanes in this repository")
    refused = args.apply and any(d.action == "keep" and d.holds_work for d in decisions)
    return EXIT_HOLDS_WORK if refused else 0
