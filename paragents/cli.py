"""Command line: argument parsing only; everything is built through factories.

    paragents [--dir PATH] [--model M] [--endpoint URL] [--allow R] [--ask R] [--deny R]     (the TUI)
    paragents run [--session NAME | --continue] [--take-over] [--dir PATH] [--model M] [--endpoint URL]
                  [--max-turns N] [--json] PROMPT
    paragents sessions list | show NAME | export NAME --format md|json
    paragents lanes list | diff NAME | merge NAME --strategy S | gc [--apply] [--force]   (cli_lanes)
    paragents permissions check ... | show ...
    paragents replay CASSETTE [--json] [--tui]  |  paragents demo  |  --record FILE (TUI and run)

Exit codes: 0 done, 1 runtime failure, 2 config/auth/usage error, 3 endpoint protocol error,
4 session held by another live process (``run`` without ``--take-over``), 130 cancelled.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from paragents import __version__


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dir", metavar="PATH", help="project directory (default: the current directory)")
    p.add_argument("--model", metavar="M", help="model name (overrides the config)")
    p.add_argument(
        "--endpoint", metavar="URL", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1"
    )
    p.add_argument(
        "--no-tools", action="store_true", help="chat without tools (models that cannot call tools)"
    )
    p.add_argument("--mode", choices=["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"])
    p.add_argument("--allow", action="append", default=[], metavar="RULE", help="extra allow rule")
    p.add_argument("--ask", action="append", default=[], metavar="RULE", help="extra ask rule")
    p.add_argument("--deny", action="append", default=[], metavar="RULE", help="extra deny rule")


def build_parser() -> argparse.ArgumentParser:
    """Return the argparse parser for every subcommand."""
    parser = argparse.ArgumentParser(
        prog="paragents", description="Run several LLM coding-agent sessions side by side."
    )
    parser.add_argument("--version", action="version", version=f"paragents {__version__}")
    _add_common(parser)
    parser.add_argument("--record", metavar="FILE", help="write a cassette of this run to FILE (no secrets)")
    sub = parser.add_subparsers(dest="command")

    run = sub.add_parser("run", help="run one prompt headless, with the same engine and store")
    _add_common(run)
    which = run.add_mutually_exclusive_group()
    which.add_argument("--session", metavar="NAME", help="continue (or create) this session")
    which.add_argument(
        "--continue",
        dest="continue_",
        action="store_true",
        help="continue the most recent run session (default: each run starts its own session run-N)",
    )
    run.add_argument("--max-turns", type=int, metavar="N", help="max model requests in this turn")
    run.add_argument("--json", action="store_true", help="print one JSON object instead of the stream")
    run.add_argument(
        "--take-over",
        action="store_true",
        help="run even when another live paragents holds the session (it becomes read-only there)",
    )
    run.add_argument("prompt", help="the prompt text ('-' reads it from stdin)")
    run.add_argument(
        "--record", metavar="FILE", default=argparse.SUPPRESS, help="write a cassette of this run to FILE"
    )

    from paragents.cli_cassette import add_cassette_parsers

    add_cassette_parsers(sub)
    from paragents.cli_lanes import add_parser as add_lanes_parser

    add_lanes_parser(sub)

    sessions = sub.add_parser("sessions", help="list, show or export persisted sessions")
    ssub = sessions.add_subparsers(dest="sessions_command", required=True)
    ls = ssub.add_parser("list", help="list the sessions of this project")
    ls.add_argument("--dir", metavar="PATH")
    ls.add_argument("--all", action="store_true", help="sessions of every project")
    show = ssub.add_parser("show", help="print a session's transcript")
    show.add_argument("name")
    show.add_argument("--dir", metavar="PATH")
    export = ssub.add_parser("export", help="export a session as Markdown or JSON")
    export.add_argument("name")
    export.add_argument("--dir", metavar="PATH")
    export.add_argument("--format", choices=["md", "json"], default="md")

    try:
        from paragents.cli_permissions import add_permissions_parser

        add_permissions_parser(sub)
    except ImportError:  # pragma: no cover - during bootstrap only
        pass
    return parser


def _cli_rules(args: argparse.Namespace) -> dict[str, list[str]] | None:
    rules = {k: list(getattr(args, k, []) or []) for k in ("allow", "ask", "deny")}
    return rules if any(rules.values()) else None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``paragents`` command; returns (and exits with) the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.cli_rules = _cli_rules(args)
    try:
        code = _dispatch(args)
    except KeyboardInterrupt:
        code = 130
    if argv is None:
        sys.exit(code)
    return code


def _dispatch(args: argparse.Namespace) -> int:
    if args.command in ("replay", "demo") or getattr(args, "record", None):
        from paragents.cli_cassette import run_cassette_command

        return run_cassette_command(args, _dispatch_plain)
    return _dispatch_plain(args)


def _dispatch_plain(args: argparse.Namespace) -> int:
    if args.command == "run":
        if args.prompt == "-":
            args.prompt = sys.stdin.read()
        if args.max_turns is not None and args.max_turns < 1:
            print("paragents run: --max-turns must be at least 1", file=sys.stderr)
            return 2
        from paragents.headless import run_headless

        return asyncio.run(run_headless(args))
    if args.command == "sessions":
        from paragents.cli_sessions import run_sessions

        return asyncio.run(run_sessions(args))
    if args.command == "lanes":
        return int(args.lanes_run(args))
    if args.command == "permissions":
        from paragents.cli_permissions import run_permissions

        return run_permissions(args)
    return run_tui(args)


def run_tui(args: argparse.Namespace) -> int:
    """Start the Textual app for the project in ``args.dir``; return the exit code."""
    from paragents.config import ConfigError, has_config
    from paragents.sessions import Runtime

    project_dir = Path(args.dir or ".").expanduser().resolve()
    if not project_dir.is_dir():
        print(f"paragents: --dir {project_dir} is not a directory", file=sys.stderr)
        return 2
    first_run = not has_config(project_dir) and not args.endpoint
    overrides: dict[str, Any] = {"base_url": args.endpoint, "model": args.model}
    if args.no_tools:
        overrides["tools"] = False

    async def main_async() -> int:
        try:
            runtime = await Runtime.create(project_dir, cli_overrides=overrides, cli_rules=args.cli_rules)
        except ConfigError as exc:
            print(f"paragents: config error: {exc}", file=sys.stderr)
            return 2
        except Exception as exc:  # PolicyError: refuse to start under an unreadable policy
            print(f"paragents: {exc}", file=sys.stderr)
            return 2
        from paragents.ui.app import make_app

        app = make_app(runtime, first_run=first_run, tune_gc=True)
        try:
            await app.run_async()
        finally:
            await app.shutdown_runtime()
        return int(app.return_code or 0)

    return asyncio.run(main_async())


if __name__ == "__main__":  # pragma: no cover
    main()
