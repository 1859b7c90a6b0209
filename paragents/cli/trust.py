"""``paragents trust [--dir PATH] [--yes] [--show]``: review and trust the files of a project that make
paragents run commands or allow more (``paragents.trust``), and the question the TUI asks at start.

``trust`` lists each untrusted file with what it runs or changes and asks (in a terminal) whether to
trust them as they are; ``--yes`` trusts without asking (after you reviewed them: ``--show`` only
lists). The answer is kept in the user's state, by the hash of what each file runs or allows: a change
asks again. Exit codes: 0 trusted (or nothing to trust), 2 refused or not a terminal without --yes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from paragents.trust import PostureItem, describe, trust, untrusted


def add_parsers(sub: Any) -> None:
    """Add ``trust`` to the top-level subparsers ``sub``."""
    parser = sub.add_parser(
        "trust", help="review and trust a project's files that run commands or loosen permissions"
    )
    parser.add_argument("--dir", metavar="PATH", help="project directory (default: the current directory)")
    parser.add_argument("--yes", action="store_true", help="trust them without asking (review with --show)")
    parser.add_argument("--show", action="store_true", help="only list what is not trusted yet")
    parser.set_defaults(trust_run=run)


def run(args: argparse.Namespace) -> int:
    """Run ``paragents trust``; return the exit code."""
    project = Path(args.dir or ".").expanduser().resolve()
    if not project.is_dir():
        print(f"paragents trust: --dir {project} is not a directory", file=sys.stderr)
        return 2
    items = untrusted(project)
    if not items:
        print(f"nothing to trust in {project}: its files run nothing and allow nothing you have not accepted")
        return 0
    if args.show:
        print(f"not trusted yet in {project}:\n{describe(items)}")
        return 0
    if args.yes:
        _trust(project, items)
        return 0
    if not sys.stdin.isatty():
        print(f"not trusted yet in {project}:\n{describe(items)}", file=sys.stderr)
        print("paragents trust: not a terminal: review them, then run with --yes", file=sys.stderr)
        return 2
    return 0 if ask(project, items) else 2


def _trust(project: Path, items: list[PostureItem]) -> None:
    where = trust(project, items)
    names = ", ".join(item.rel for item in items)
    print(f"trusted {names} of {project} as they are now (kept in {where})")


def ask(project: Path, items: list[PostureItem], stdin: TextIO | None = None) -> bool:
    """Show what the project's untrusted files run or change and ask whether to trust them; record a
    yes. Returns the answer (anything but y/yes is no)."""
    stream = stdin if stdin is not None else sys.stdin
    print(
        f"\nThe project {project} has files that make paragents run commands or allow more, and you have "
        f"not trusted them as they are:\n{describe(items)}\n\n"
        "A repository you cloned, or a command a session ran, can write these files. Trust them only if "
        "you wrote them or read them just now.",
        flush=True,
    )
    print("Trust these files and continue? [y/N] ", end="", flush=True)
    answer = stream.readline().strip().lower()
    if answer in ("y", "yes"):
        _trust(project, items)
        return True
    print("not trusted: nothing was started", file=sys.stderr)
    return False
