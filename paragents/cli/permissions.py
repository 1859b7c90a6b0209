"""``paragents permissions check|show``: ask the permission layer about one call, or list the rules.

Its arguments are in ``paragents/cli/parser.py`` (:func:`add_permissions_parser`); the main CLI calls
:func:`run_permissions`, and ``python -m paragents.cli.permissions ...`` runs the same commands alone.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from paragents import jsonfile, trust
from paragents.cli.parser import add_permissions_parser
from paragents.config import ConfigError, load_config
from paragents.permissions import Decision, Policy, PolicyError, parse_mode, tool_family
from paragents.permissions.destructive import destructive_reason
from paragents.permissions.policy import KNOWN_TOOLS
from paragents.terminal_text import strip_controls
from paragents.tools.sandbox import SandboxConfig, check, denied_out_of_sight

ACP_KINDS = ("read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other")
"""ACP tool kinds ``--tool acp:KIND`` takes (the agent's permission request is checked as a session does)."""

FAMILIES = ("Bash", "Read", "Edit")


def _say(text: str, **kwargs: Any) -> None:
    """Print a line that may hold a command, a path or a rule given on the command line or found in a
    settings file: escape sequences and control characters removed (they would reach the terminal)."""
    print(strip_controls(text), **kwargs)


def _fail(message: str) -> int:
    print(f"paragents permissions: {message}", file=sys.stderr)
    return 2


def as_json(
    decision: Decision, *, mode: str, notes: Sequence[str] = (), destructive: str | None = None
) -> dict[str, Any]:
    """The JSON ``permissions check --json`` prints: the decision, the rule, its scope and file, each
    part, the rules "always allow" would add, what it writes, the destructive flag and the notes
    loading the permission files gave."""
    return {
        "decision": decision.decision,
        "reason": decision.reason,
        "rule": decision.rule,
        "scope": decision.scope,
        "source": decision.source,
        "mode": mode,
        "subcommands": [
            {"command": s.command, "decision": s.decision, "reason": s.reason, "rule": s.rule}
            for s in decision.subcommands
        ],
        "suggested_rules": list(decision.suggested_rules),
        "write_targets": list(decision.write_targets),
        "targets_unknown": decision.targets_unknown,
        "destructive": destructive is not None,
        "destructive_reason": destructive,
        "notes": list(notes),
    }


def _sandboxed(cwd: Path, policy: Policy, family: str) -> bool:
    """Whether a session's command here would run in the sandbox with ``sandbox.auto_allow`` on (as
    the agent computes it: the config's sandbox settings and whether bubblewrap works), with the
    project's config read as it will be once trusted (:func:`_trust_of` says so)."""
    if family != "Bash":
        return False

    settings = load_config(cwd, as_if_trusted=True).config.sandbox
    if not settings.auto_allow:
        return False
    sandbox = SandboxConfig(
        mode=settings.mode,
        network=settings.network,
        writable=settings.writable,
        hidden_rules=policy.read_deny_patterns(cwd),
        auto_allow=settings.auto_allow,
        bwrap=settings.bwrap,
    )
    return check(sandbox).active


def _masked(cwd: Path, policy: Policy, family: str) -> Callable[[], list[str]] | None:
    """What a session's command here would not see because Read deny rules name it (when it would
    run in the bubblewrap sandbox; as the agent computes it), or None; the project's config is read
    as it will be once trusted, like :func:`_sandboxed`."""
    if family != "Bash":
        return None
    settings = load_config(cwd, as_if_trusted=True).config.sandbox
    sandbox = SandboxConfig(
        mode=settings.mode, writable=settings.writable, hidden_rules=policy.read_deny_patterns(cwd),
        bwrap=settings.bwrap,
    )  # fmt: skip
    if not check(sandbox).active:
        return None
    return partial(denied_out_of_sight, sandbox, cwd)


def _decide_acp(policy: Policy, kind: str, arguments: dict[str, Any], cwd: Path, mode: str) -> Decision:
    """Decide an ACP agent's permission request of ``kind`` with ``arguments`` as its rawInput, as a
    session hosting the agent does (:func:`paragents.acp.permission.decide_mapped`)."""
    # deferred: the ACP library loads only for --tool acp:KIND
    from acp.schema import ToolCallUpdate

    from paragents.acp.permission import decide_mapped, map_call  # deferred: as above

    update = ToolCallUpdate(tool_call_id="check", kind=kind, raw_input=arguments, title=f"{kind} call")
    return decide_mapped(policy, map_call(update), cwd=cwd, mode=mode)


def _trust_of(project: Path, settings_given: bool) -> tuple[list[str], str]:
    """The project's files a session would refuse to start with (posture files not trusted as they
    are, paragents.trust; with ``--settings`` its permission files are not read) and the line saying
    what the answer assumed: a session here runs nothing until they are trusted, so ``check`` answers
    as it will once they are (with their rules and config), and says so."""
    waiting = [
        item.rel
        for item in trust.untrusted(project)
        if not (settings_given and item.rel in trust.PERMISSION_FILES)
    ]
    if not waiting:
        return [], "the project's files are trusted (or need no trust): answered as a session here decides"
    where = "" if Path.cwd().resolve() == project.resolve() else f" --dir {shlex.quote(str(project))}"
    return waiting, (
        f"NOT trusted yet: {', '.join(waiting)} (new, or changed since you trusted them); a session here"
        f" does not start until you trust them (`paragents trust{where}` after reviewing them): answered"
        " as it will be once they are trusted, with their rules and settings"
    )


def _check(args: argparse.Namespace) -> int:
    tool = args.tool
    acp_kind = tool[4:] if tool.startswith("acp:") else None
    if acp_kind is not None and acp_kind not in ACP_KINDS:
        return _fail(f"unknown ACP tool kind {acp_kind!r}; use one of {', '.join(ACP_KINDS)}")
    if acp_kind is None and tool not in KNOWN_TOOLS and not tool.startswith("mcp__"):
        known = ", ".join(sorted(KNOWN_TOOLS))
        return _fail(f"unknown tool {tool!r}; use one of {known}, mcp__server__tool or acp:KIND")
    loaded: dict[str, Any] = {}
    for flag, text in (("--input", args.input), ("--schema", args.schema)):
        try:
            loaded[flag] = jsonfile.loads(text, flag) if text else None
        except jsonfile.JsonFileError as err:
            return _fail(str(err))
    arguments, schema = loaded["--input"], loaded["--schema"]
    if not isinstance(arguments, dict):
        return _fail('--input must be a JSON object, e.g. {"command": "ls"}')
    cwd = Path(os.path.abspath(args.cwd or os.getcwd()))
    cli_rules = {kind: getattr(args, kind) for kind in ("allow", "ask", "deny") if getattr(args, kind)}
    settings = [Path(p) for p in args.settings] if args.settings else None
    try:
        policy = Policy.load(cwd, cli_rules=cli_rules, settings_files=settings)
        mode = parse_mode(args.mode) if args.mode else policy.default_mode
        if acp_kind is not None:
            decision = _decide_acp(policy, acp_kind, arguments, cwd, mode)
        else:
            decision = policy.decide(
                tool,
                arguments,
                cwd=cwd,
                mode=mode,
                sandboxed=_sandboxed(cwd, policy, tool_family(tool)),
                read_only=args.read_only,
                schema=schema,
                masked=_masked(cwd, policy, tool_family(tool)),
            )
    except (PolicyError, ConfigError, ValueError) as err:
        return _fail(str(err))
    destructive = destructive_reason(
        f"acp_{acp_kind}" if acp_kind else tool, arguments, destructive_hint=args.destructive
    )
    waiting, assumed = _trust_of(cwd, settings is not None)
    for note in policy.notes:
        _say(f"note: {note}", file=sys.stderr)
    if args.json:
        shown = as_json(decision, mode=mode.value, notes=policy.notes, destructive=destructive)
        print(
            json.dumps(
                shown | {"trusted": not waiting, "untrusted_files": waiting, "trust": assumed}, indent=2
            )
        )
        return 0
    _say(f"decision: {decision.decision}")
    _say(f"reason:   {decision.reason}")
    _say(f"rule:     {decision.rule or '-'}")
    _say(f"scope:    {decision.scope or '-'}{f' ({decision.source})' if decision.source else ''}")
    _say(f"mode:     {mode.value}")
    _say(f"trust:    {assumed}")
    if destructive:
        _say(f"destructive: {destructive}")
    if len(decision.subcommands) > 1 or tool in ("Bash", "run_command"):
        _say("parts:")
        for sub in decision.subcommands:
            _say(f"  {sub.decision:5}  {sub.command}  ({sub.reason})")
    if decision.suggested_rules:
        _say(f"always allow would add: {', '.join(decision.suggested_rules)}")
    return 0


def _show(args: argparse.Namespace) -> int:
    cwd = Path(os.path.abspath(args.cwd or os.getcwd()))
    try:
        policy = Policy.load(cwd)
    except PolicyError as err:
        return _fail(str(err))
    rows = policy.rules_table()
    for note in policy.notes:
        _say(f"note: {note}")
    _say(f"default mode: {policy.default_mode.value}")
    if not rows:
        _say("no rules: reads inside the project run; edits and commands ask")
    for row in rows:
        _say(f"{row.kind:5}  {row.rule}  [{row.scope}: {row.source_path or 'command line'}]")
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
    parser = argparse.ArgumentParser(prog="paragents")
    add_permissions_parser(parser.add_subparsers(dest="command", required=True))
    return run_permissions(parser.parse_args(["permissions", *(argv if argv is not None else sys.argv[1:])]))


if __name__ == "__main__":
    sys.exit(main())
