"""``paragents inbox [--json] [--all]`` and ``paragents approve ID [--session-wide|--always] [--deny
[--note TEXT]] [--answer A]``: list and answer pending approvals and conflict decisions from any
process (they are rows of the store; the TUI or ``paragents run`` waiting on one continues at once).

``approve`` answers an approval with allow_once (default), allow_session (``--session-wide``),
allow_always (``--always``), reject_once (``--deny``) or reject_with_note (``--deny --note TEXT``); a
conflict with run_anyway (default), skip (``--deny``) or any choice it offers (``--answer wait``).
``ID`` may be a unique prefix of a pending id.

Exit codes: 0 done (inbox listed, answer taken); 2 usage (bad options, no such id, an answer the item
does not take); 5 refused: the item was already answered, expired or closed (the first answer is
named on stderr), or this process may not answer: it was started by a session (its command, agent or
server: a session does not approve its own asks), it runs in a sandbox, or ``--always`` (a permanent
rule) was given without a terminal. Each answer records who gave it: ``cli (pid, tty, parents)``.
``inbox --answered`` lists the last answers with who gave them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paragents import paths
from paragents.terminal_text import hidden_symbols, show_controls

if TYPE_CHECKING:
    from paragents.store.approvals import ApprovalsRepo

EXIT_REFUSED = 5
"""``approve``: the item was already answered, expired or closed; nothing was changed."""


def add_parsers(sub: Any) -> None:
    """Add ``inbox`` and ``approve`` to the top-level subparsers ``sub``, and ``--wait-approvals`` to
    its ``run`` subcommand when that exists."""
    run_parser = sub.choices.get("run")
    if run_parser is not None:
        run_parser.add_argument(
            "--wait-approvals",
            action="store_true",
            help="without a terminal, leave asks pending for `paragents approve` (default: deny them)",
        )
    inbox = sub.add_parser("inbox", help="list what waits on you: pending approvals and conflicts")
    inbox.add_argument("--dir", metavar="PATH", help="project directory (default: the current directory)")
    inbox.add_argument("--all", action="store_true", help="every project's, not only this one's")
    inbox.add_argument("--json", action="store_true", help="print one JSON list")
    inbox.add_argument("--show", metavar="ID", help="print one item's whole call (what the list cuts)")
    inbox.add_argument(
        "--answered", action="store_true", help="the last answers instead, with who gave each (the audit)"
    )
    inbox.set_defaults(approvals_run=run)
    approve = sub.add_parser("approve", help="answer a pending approval or conflict (see `paragents inbox`)")
    approve.add_argument("id", help="the id `paragents inbox` shows (or a unique prefix of it)")
    scope = approve.add_mutually_exclusive_group()
    scope.add_argument("--session-wide", action="store_true", help="allow it for the rest of the session")
    scope.add_argument("--always", action="store_true", help="allow it always (stores the rule shown)")
    scope.add_argument(
        "--deny", dest="deny_answer", action="store_true", help="deny it (a conflict: skip the call)"
    )
    scope.add_argument("--answer", metavar="A", help="a conflict's choice: wait, run_anyway, skip, reread")
    approve.add_argument("--note", metavar="TEXT", help="with --deny: tell the model why")
    approve.add_argument("--json", action="store_true", help="print the result as JSON")
    approve.set_defaults(approvals_run=run)


def run(args: argparse.Namespace) -> int:
    """Run ``inbox`` or ``approve``; return the exit code."""
    if args.command == "approve" and args.note is not None and not args.deny_answer:
        print("paragents approve: --note goes with --deny", file=sys.stderr)
        return 2
    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    # deferred: start-up (`paragents --help` imports this module)
    from paragents.store import Store, StoreError

    if not paths.db_path().exists():  # nothing was ever asked here: do not create the store
        if args.command == "inbox":
            print("[]" if args.json else "nothing waits on you (no store yet)")
            return 0
        print(f"paragents approve: no approval or conflict with id {args.id!r}", file=sys.stderr)
        return 2
    try:
        store = await Store.open(paths.db_path())
    except StoreError as exc:
        print(f"paragents {args.command}: {exc}", file=sys.stderr)
        return 1
    try:
        if args.command == "inbox":
            return await _inbox(args, store.approvals)
        return await _approve(args, store.approvals)
    except StoreError as exc:
        print(f"paragents {args.command}: {exc}", file=sys.stderr)
        return 1
    finally:
        await store.close()


ANSWERED_SHOWN = 20
"""``inbox --answered`` lists this many of the last answers."""


async def _answered(args: argparse.Namespace, approvals: ApprovalsRepo, project: Path | None) -> int:
    """``inbox --answered``: the last answers (newest first), each with who gave it and when."""
    rows = await approvals.find(state="answered", project_dir=project)
    rows = sorted(rows, key=lambda r: r.answered_at or 0, reverse=True)[:ANSWERED_SHOWN]
    if args.json:
        print(json.dumps([r.to_json() for r in rows], indent=2, ensure_ascii=False))
        return 0
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table("id", "when", "session", "what", "answer", "answered by")
    for r in rows:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r.answered_at or r.created_at))
        table.add_row(
            r.id, when, Text(r.session_name), Text(r.summary), r.answer or "", Text(r.answered_by or "")
        )
    Console(highlight=False).print(table)
    return 0


async def _inbox(args: argparse.Namespace, approvals: ApprovalsRepo) -> int:
    # deferred: start-up (`paragents --help` imports this module)
    from paragents.serve.shown import plural, printable, size_of, whole_call

    project = None if args.all else Path(args.dir or ".").expanduser().resolve()
    if args.answered:
        return await _answered(args, approvals, project)
    rows = await approvals.find(project_dir=project)
    if args.show:
        found = [r for r in rows if r.id.startswith(args.show.strip().lower())]
        if len(found) != 1:
            print(f"paragents inbox: no single pending item with id {args.show!r}", file=sys.stderr)
            return 2
        whole = whole_call(found[0].tool, str(found[0].call.get("arguments") or ""))
        hidden = hidden_symbols(whole)  # drawn as symbols, never dropped: what is approved is what runs
        drawn = ""
        if hidden:
            drawn = (
                f"; {plural(len(hidden), 'invisible character')} drawn as {' '.join(dict.fromkeys(hidden))}"
            )
        print(printable(f"{found[0].summary}\n({found[0].tool}, {size_of(whole)}{drawn}; whole:)"))
        print(show_controls(whole))
        return 0
    if args.json:  # with each item's whole call (the preview may be cut)
        print(json.dumps([r.to_json() | {"call": r.call} for r in rows], indent=2, ensure_ascii=False))
        return 0
    if not rows:
        print("nothing waits on you" + ("" if args.all else f" in {project}"))
        return 0
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table("id", "age", "session", "kind", "what", "waiting in")
    for r in rows:
        where = "process gone: asked again when reopened" if r.waiter_gone() else f"pid {r.pid}"
        kind = r.kind if r.kind == "approval" else f"conflict ({'/'.join(r.choices)})"
        what = Text(show_controls(r.summary))  # ESC as "␛", as the summary of a tool shows it
        whole = whole_call(r.tool, str(r.call.get("arguments") or ""))
        if _cut(r.summary, whole):  # the one-line summary leaves some out: say so
            what.append(f"\n(cut: {size_of(whole)} in all; paragents inbox --show {r.id})", style="yellow")
        table.add_row(r.id, _age(r.created_at), Text(r.session_name), kind, what, where)
    console = Console(highlight=False)
    console.print(table)
    console.print(
        Text(
            "answer: paragents approve ID [--session-wide | --always | --deny [--note TEXT]]"
            " (a conflict: --answer CHOICE)",
            style="dim",
        )
    )
    return 0


def _cut(summary: str, whole: str) -> bool:
    """Whether the one-line ``summary`` of a call leaves out some of its ``whole`` call: more lines, or
    characters past the cut. Control characters are drawn as symbols in both (they are shown, not cut),
    and a run of spaces counts as the one space the line shows."""
    if "\n" in whole:
        return True
    shown = " ".join(show_controls(summary).split())
    return " ".join(show_controls(whole).split()) not in shown


def _answer_for(args: argparse.Namespace, kind: str) -> str:
    if args.answer:
        return str(args.answer)
    if kind == "conflict":
        return "skip" if args.deny_answer else "run_anyway"
    if args.deny_answer:
        return "reject_with_note" if args.note else "reject_once"
    if args.always:
        return "allow_always"
    return "allow_session" if args.session_wide else "allow_once"


async def _approve(args: argparse.Namespace, approvals: ApprovalsRepo) -> int:
    wanted = args.id.strip().lower()  # ids are lowercase hex; `786A` is `786a`
    rec = await approvals.get(wanted)
    if rec is None and len(wanted) >= 4:
        # pending items first; an answered one too, so that a second answer is refused naming the first
        for state in ("pending", None):
            matches = [r for r in await approvals.find(state=state) if r.id.startswith(wanted)]
            if matches:
                break
        if len(matches) > 1:
            print(
                f"paragents approve: {args.id!r} matches {len(matches)} items: give more of the id",
                file=sys.stderr,
            )
            return 2
        rec = matches[0] if matches else None
    if rec is None:
        short = " (give at least 4 characters of the id)" if len(wanted) < 4 else ""
        print(f"paragents approve: no approval or conflict with id {args.id!r}{short}", file=sys.stderr)
        return 2
    # deferred: start-up (`paragents --help` imports this module)
    from paragents.sessions.answerer import cli_check, has_terminal

    answer = _answer_for(args, rec.kind)
    who = await cli_check(approvals)  # a session's own command may not answer (sessions/answerer.py)
    if who.refused is not None and rec.state == "pending":
        print(f"paragents approve: refused: {who.refused}", file=sys.stderr)
        return EXIT_REFUSED
    if answer == "allow_always" and rec.state == "pending" and not has_terminal():
        print(
            "paragents approve: refused: --always writes a permanent rule and needs a terminal; "
            "answer --session-wide, or run it from your terminal",
            file=sys.stderr,
        )
        return EXIT_REFUSED
    result = await approvals.answer(rec.id, answer, who.label, args.note)
    if args.json:
        row = result.approval.to_json() if result.approval is not None else None
        print(json.dumps({"status": result.status, "message": result.message, "approval": row}))
    elif result.accepted:
        print(result.message)
    if result.accepted:
        return 0
    if not args.json:
        print(f"paragents approve: {result.message}", file=sys.stderr)
    return 2 if result.status in ("invalid", "unknown") else EXIT_REFUSED


def _age(created: float) -> str:
    seconds = max(0, int(time.time() - created))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
