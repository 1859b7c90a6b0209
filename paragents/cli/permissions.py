"""``paragents permissions check|show``: ask the permission layer about one call, or list the rules.

Its arguments are in ``paragents/cli/parser.py`` (:func:`add_permissions_parser`); the main CLI calls
:func:`run_permissions`, and ``python -m paragents.cli.permissions ...`` runs the same commands alone.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from paragents.permissions import INTERNAL_TOOLS, Decision, Policy, PolicyError, parse_mode

FAMILIES = ("Bash", "Read", "Edit")


def _fail(message: str) -> int:
    print(f"paragents permissions: {message}", file=sys.stderr)
    return 2


def _as_json(decision: Decision) -> dict[str, Any]:
    return {
        "decision": decision.decision,
        "reason": decision.reason,
        "rule": decision.rule,
        "scope": decision.scope,
        "subcommands": [
            {"command": s.command, "decision": s.decision, "reason": s.reason, "rule": s.rule}
            for s in decision.subcommands
        ],
        "suggested_rules": list(decision.suggested_rules),
    }


def _check(args: argparse.Namespace) -> int:
    tool = args.tool
    if tool not in FAMILIES and tool not in INTERNAL_TOOLS and not tool.startswith("mcp__"):
        known = ", ".join((*FAMILIES, *INTERNAL_TOOLS))
        return _fail(f"unknown tool {tool!r}; use one of {known} or mcp__server__tool")
    try:
        arguments = json.loads(args.input)
    except json.JSONDecodeError as err:
        return _fail(f"--input is not valid JSON ({err.msg} at column {err.colno})")
    if not isinstance(arguments, dict):
        return _fail('--input must be a JSON object, e.g. {"command": "ls"}')
    try:
        mode = parse_mode(args.mode)
    except ValueError as err:
        return _fail(str(err))
    cwd = Path(os.path.abspath(args.cwd or os.getcwd()))
    cli_rules = {kind: getattr(args, kind) for kind in ("allow", "ask", "deny") if getattr(args, kind)}
    settings = [Path(p) for p in args.settings] if args.settings else None
    try:
        policy = Policy.load(cwd, cli_rules=cli_rules, settings_files=settings)
    except PolicyError as err:
        return _fail(str(err))
    decision = policy.decide(tool, arguments, cwd=cwd, mode=mode)
    if args.json:
        print(json.dumps(_as_json(decision), indent=2))
        return 0
    print(f"decision: {decision.decision}")
    print(f"reason:   {decision.reason}")
    print(f"rule:     {decision.rule or '-'}")
    print(f"scope:    {decision.scope or '-'}")
    if len(decision.subcommands) > 1 or tool in ("Bash", "run_command"):
        print("parts:")
        for sub in decision.subcommands:
            print(f"  {sub.decision:5}  {sub.command}  ({sub.reason})")
    if decision.suggested_rules:
        print(f"always allow would add: {', '.join(decision.suggested_rules)}")
    return 0


def _show(args: argparse.Namespace) -> int:
    cwd = Path(os.path.abspath(args.cwd or os.getcwd()))
    try:
        policy = Policy.load(cwd)
    except PolicyError as err:
        return _fail(str(err))
    rows = policy.rules_table()
    print(f"default mode: {policy.default_mode.value}")
    if not rows:
        print("no rules: reads inside the project run; edits and commands ask")
    for row in rows:
        print(f"{row.kind:5}  {row.rule}  [{row.scope}: {row.source_path or 'command line'}]")
    return 0


def run_permissions(args: argparse.Namespace) -> int:
    """Run ``permissions check`` or ``permissions show``; return 0 when it ran, 2 on bad input.

    Bad input (invalid JSON in --input, unknown tool or mode, unreadable settings) prints one line to
    stderr."""
    if args.permissions_command == "check":
        return _check(args)
    return _show(args)


def main(argv: list[str] | None = None) -> int:
    """Entry point for ``python -m paragents.cli.permissions check|show ...``; returns the exit code."""
    from paragents.cli.parser import add_permissions_parser

    parser = argparse.ArgumentParser(prog="paragents")
    add_permissions_parser(parser.add_subparsers(dest="command", required=True))
    return run_permissions(parser.parse_args(["permissions", *(argv if argv is not None else sys.argv[1:])]))


if __name__ == "__main__":
    sys.exit(main())
