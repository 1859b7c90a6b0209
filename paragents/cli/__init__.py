"""Command line: argument parsing only; everything is built through factories.

    paragents [--dir PATH] [--model M] [--endpoint URL] [--allow R] [--ask R] [--deny R]     (the TUI)
    paragents run [--session NAME | --continue] [--take-over] [--dir PATH] [--model M] [--endpoint URL]
                  [--max-turns N] [--json] PROMPT
    paragents sessions list | show NAME | export NAME --format md|json
    paragents fanout [--n N] [--models A,B] [--verify CMD] [--judge] [--output rich|json|patch] PROMPT
    paragents runs list | show ID [--json]
    paragents permissions check ... | show ...
    paragents serve [--host H] [--port N] [--jwt-secret-file F] [--pair] [--tui]  |  paragents pair
    paragents replay CASSETTE [--json] [--tui]  |  paragents demo  |  --record FILE (TUI and run)
    paragents inbox [--json] [--all]  |  paragents approve ID [--session-wide|--always] [--deny [--note T]]
    paragents trust [--dir PATH] [--yes | --show]
    paragents eval run --tasks PATH|sample --targets T,T --out DIR [...] | --replay DIR
    paragents eval validate|report|compare|gate ...   (docs/eval.md)

Exit codes: 0 done, 1 runtime failure, 2 config/auth/usage error, 3 endpoint protocol error,
4 session held by another live process (``run`` without ``--take-over``), 130 cancelled,
141 standard output closed by its reader (``| head``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
from collections.abc import Sequence

from paragents.cli import serve
from paragents.cli.parser import build_parser, cli_rules

__all__ = ["build_parser", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``paragents`` command; returns (and exits with) the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.cli_rules = cli_rules(args)
    try:
        code = _dispatch(args)
        sys.stdout.flush()
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:  # `paragents ... | head`: the reader left; end quietly as a shell tool does
        _quiet_stdout()
        code = EXIT_BROKEN_PIPE
    if argv is None:
        sys.exit(code)
    return code


EXIT_BROKEN_PIPE = 141
"""Exit code when standard output's reader went away (128 + SIGPIPE, as a shell reports it)."""


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush does not raise again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    with contextlib.suppress(OSError):
        os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _dispatch(args: argparse.Namespace) -> int:
    if args.command in ("replay", "demo") or getattr(args, "record", None):
        # deferred: start-up of `paragents --help` (a command module loads when it runs)
        from paragents.cli.cassette import run_cassette_command

        return run_cassette_command(args, _dispatch_plain)
    return _dispatch_plain(args)


def _dispatch_plain(args: argparse.Namespace) -> int:
    if args.command == "run":
        if args.prompt == "-":
            args.prompt = sys.stdin.read()
        if args.max_turns is not None and args.max_turns < 1:
            print("paragents run: --max-turns must be at least 1", file=sys.stderr)
            return 2
        # deferred: start-up of `paragents --help` (a command module loads when it runs)
        from paragents.cli.run import run_headless

        return asyncio.run(run_headless(args))
    if args.command == "acp":  # paragents as an ACP agent on stdio
        # deferred: start-up of `paragents --help` (a command module loads when it runs)
        from paragents.cli.acp_agent import serve as serve_acp

        return asyncio.run(serve_acp(args))
    if args.command == "sessions":
        # deferred: start-up of `paragents --help` (a command module loads when it runs)
        from paragents.cli.sessions import run_sessions

        return asyncio.run(run_sessions(args))
    if args.command == "lanes":
        return int(args.lanes_run(args))
    if getattr(args, "fanteam_run", None) is not None:  # review, split, decisions (cli/review.py)
        return int(args.fanteam_run(args))
    if args.command in ("inbox", "approve"):
        return int(args.approvals_run(args))
    if args.command == "trust":
        return int(args.trust_run(args))
    if args.command in ("serve", "pair"):
        return serve.run_serve(args) if args.command == "serve" else serve.run_pair(args)
    if args.command == "eval":
        # deferred: start-up of `paragents --help` (a command module loads when it runs)
        from paragents.cli.eval import run_eval_command

        return run_eval_command(args)
    if args.command in ("fanout", "runs"):
        return int(args.fanout_run(args))
    if args.command == "permissions":
        # deferred: start-up of `paragents --help` (a command module loads when it runs)
        from paragents.cli.permissions import run_permissions

        return run_permissions(args)
    # deferred: start-up of `paragents --help` (a command module loads when it runs)
    from paragents.cli.tui import run_tui

    return run_tui(args)
