"""Start the Textual app (``paragents`` with no subcommand) on the project in ``--dir``."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from paragents.cli.exit_codes import EXIT_CONFIG
from paragents.cli.open_runtime import OpenFailed, endpoint_given, open_runtime, project_dir_of
from paragents.cli.trust import ask
from paragents.config import has_config
from paragents.trust import untrusted


def run_tui(args: argparse.Namespace) -> int:
    """Start the Textual app for the project in ``args.dir``; return the exit code."""
    try:
        project_dir = project_dir_of(args, "paragents")
    except OpenFailed as exc:
        return exc.code
    first_run = not has_config(project_dir) and not endpoint_given(args)
    if not _trusted_at_start(project_dir):
        return EXIT_CONFIG

    async def main_async() -> int:
        try:
            opened = await open_runtime(args, project_dir, prog="paragents", keyless_ok=True)
        except OpenFailed as exc:
            return exc.code
        # deferred: Textual loads once the project, its trust and its config are checked (errors come fast)
        from paragents.ui.app import make_app

        # an api_key_env that is not set: the app starts with /setup open (its note says why)
        app = make_app(opened, first_run=first_run or bool(opened.api.settings.key_problem), tune_gc=True)
        from paragents.ui.core.signals import quit_on_signals  # deferred: as make_app

        remove_signals = quit_on_signals(app)
        try:
            await app.run_async()
        finally:
            remove_signals()
            from paragents.ui.serve.hooks import stop_all  # deferred: as make_app

            await stop_all()  # /serve's API, before the runtime it serves
            await app.shutdown_runtime()
        return int(app.return_code or 0)

    return asyncio.run(main_async())


def _trusted_at_start(project_dir: Path) -> bool:
    """The project's files that run commands or allow more are trusted, or the user (in a terminal)
    trusts them now (paragents.trust); without a terminal the start is refused by the config loader
    with the message naming them."""
    import sys

    items = untrusted(project_dir)
    if not items or not (sys.stdin.isatty() and sys.stdout.isatty()):
        return True
    return ask(project_dir, items)
