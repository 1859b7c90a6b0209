"""The cassette commands of the CLI: ``paragents replay CASSETTE [--json] [--tui]``, ``paragents demo``
and ``--record FILE`` (on the TUI and on ``paragents run``). Their arguments are in
``paragents/cli/parser.py``; this module runs them.

Exit codes of ``replay``: 0 when the replay had no errors and every ``expect`` held, 1 otherwise
(the expected/actual diff is printed), 2 for a cassette that does not load (the error names the field).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from paragents.cassette import CassetteError, load_cassette, render_text, report_ok
from paragents.cassette.player import Player
from paragents.cassette.recorder import CassetteRecorder
from paragents.llm.recording import Recorder
from paragents.sessions import ACTIVE_RECORDER


def run_cassette_command(args: argparse.Namespace, dispatch: Callable[[argparse.Namespace], int]) -> int:
    """Run ``replay``/``demo``, or run ``dispatch(args)`` while recording to ``args.record``."""
    if args.command == "replay":
        return run_replay(args)
    if args.command == "demo":
        from paragents.demo.launcher import run_demo  # deferred: Textual, only for the demo

        return run_demo(pace=args.pace)
    return run_recorded(Path(args.record), lambda: dispatch(args))


def run_recorded(path: Path, run: Callable[[], int]) -> int:
    """Call ``run()`` with a :class:`~paragents.cassette.recorder.CassetteRecorder` active (every runtime it
    creates is recorded), then write the cassette to ``path``; return ``run()``'s exit code."""
    recorder = CassetteRecorder()
    typed: Recorder = recorder  # the runtime calls it through this interface
    token = ACTIVE_RECORDER.set(typed)
    try:
        code = run()
    finally:
        ACTIVE_RECORDER.reset(token)
    if recorder.runtime is None:
        print(f"paragents: nothing was recorded (no run started); {path} not written", file=sys.stderr)
        return code
    try:
        recorder.save(path)
    except OSError as exc:
        print(f"paragents: could not write the cassette {path}: {exc}", file=sys.stderr)
        return code or 1
    print(f"paragents: cassette written to {path} (replay it: paragents replay {path})", file=sys.stderr)
    return code


def run_replay(args: argparse.Namespace) -> int:
    """``paragents replay``: load, play, print; return the exit code (see the module docstring)."""
    try:
        cassette = load_cassette(args.cassette)
    except CassetteError as exc:
        print(f"paragents replay: {exc}", file=sys.stderr)
        return 2
    report = asyncio.run(replay_report(cassette, tui=args.tui, timeout=args.timeout))
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        sys.stdout.write(render_text(report))
    if not report_ok(report) and args.json:
        expect = report.get("expect")
        for error in report["replay_errors"]:
            print(f"replay error: {error}", file=sys.stderr)
        if expect and not expect["ok"]:
            print("expect failed:\n" + expect["diff"], file=sys.stderr)
    return 0 if report_ok(report) else 1


async def replay_report(cassette: Any, *, tui: bool = False, timeout: float = 60.0) -> dict[str, Any]:
    """Play ``cassette`` headless (or through the TUI when ``tui``) and return the report dict."""
    if tui:
        from paragents.demo.tui_player import TuiPlayer  # deferred: Textual, only for --tui

        return await TuiPlayer(cassette, timeout=timeout).play()

    return await Player(cassette, timeout=timeout).play()
