"""The ``paragents`` argument parser: every subcommand and option (nothing runs here, nothing heavy is
imported: ``python -m paragents.cli.permissions`` uses :func:`add_permissions_parser` on its own)."""

from __future__ import annotations

import argparse
from typing import Any

from paragents import __version__
from paragents.cli.approvals import add_parsers as add_approvals_parsers
from paragents.cli.fanout import add_parser as add_fanout_parser
from paragents.cli.lanes import add_parser as add_lanes_parser
from paragents.cli.review import add_parsers as add_fanteam_parsers
from paragents.cli.serve import add_parsers as add_serve_parsers
from paragents.cli.trust import add_parsers as add_trust_parsers


def add_cassette_parsers(sub: Any) -> None:
    """Add the ``replay`` and ``demo`` subcommands to the CLI's subparsers ``sub``."""
    replay = sub.add_parser("replay", help="replay a cassette headless through the real engine")
    replay.add_argument("cassette", help="the cassette JSON file (see docs/cassettes.md)")
    replay.add_argument("--json", action="store_true", help="print the final state as one JSON object")
    replay.add_argument("--tui", action="store_true", help="run it through the Textual app, headless")
    replay.add_argument("--timeout", type=float, default=60.0, help="seconds before the replay gives up")
    demo = sub.add_parser("demo", help="show paragents at work on a throwaway sandbox (no model, no key)")
    demo.add_argument("--pace", type=float, default=None, help="seconds between streamed chunks")


def add_permissions_parser(subparsers: Any) -> None:
    """Add the ``permissions`` command (``check`` and ``show``) to an argparse ``subparsers`` object."""
    parser = subparsers.add_parser("permissions", help="check a tool call against the permission rules")
    sub = parser.add_subparsers(dest="permissions_command", required=True)
    check = sub.add_parser("check", help="decide one tool call: allow, ask or deny, and why")
    check.add_argument(
        "--tool",
        required=True,
        help="Bash, Read, Edit, WebFetch, an agent tool name, mcp__server__tool or acp:KIND (an ACP "
        "agent's request: acp:edit, acp:execute ...; --input is its rawInput)",
    )
    check.add_argument(
        "--input", required=True, help='the call\'s arguments as JSON, e.g. \'{"command": "ls"}\''
    )
    check.add_argument(
        "--cwd", default=None, help="working directory and project root (default: current dir)"
    )
    check.add_argument(
        "--settings",
        action="append",
        default=None,
        help="permission file(s) replacing user and project files",
    )
    check.add_argument(
        "--mode",
        default=None,
        help="permission mode (default, acceptEdits, plan, ...; default: the settings' defaultMode, "
        "as a session starts in)",
    )
    check.add_argument(
        "--read-only", action="store_true", help="an MCP tool whose server marks it read-only (readOnlyHint)"
    )
    check.add_argument(
        "--destructive", action="store_true", help="an MCP tool whose server marks it destructive"
    )
    check.add_argument("--schema", default=None, help="an MCP tool's inputSchema as JSON (paths it declares)")
    for kind in ("allow", "deny", "ask"):
        check.add_argument(
            f"--{kind}", action="append", default=[], metavar="RULE", help=f"extra {kind} rule"
        )
    check.add_argument("--json", action="store_true", help="print the decision as JSON")
    show = sub.add_parser("show", help="list the effective rules and where each comes from")
    show.add_argument("--cwd", default=None, help="project directory (default: current dir)")


MODE_CHOICES = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")
"""``--mode`` choices: the values of ``paragents.permissions.PermissionMode``, spelled out so that
parsing the command line does not import the permission layer (tree-sitter); a test checks they match."""


def add_common(p: argparse.ArgumentParser) -> None:
    """Add the options every runtime-opening command shares (--dir, --model, --endpoint, rules...)."""
    p.add_argument("--dir", metavar="PATH", help="project directory (default: the current directory)")
    p.add_argument("--model", metavar="M", help="model name (overrides the config)")
    p.add_argument(
        "--endpoint", metavar="URL", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1"
    )
    p.add_argument(
        "--no-tools", action="store_true", help="chat without tools (models that cannot call tools)"
    )
    p.add_argument("--mode", choices=MODE_CHOICES)
    p.add_argument("--allow", action="append", default=[], metavar="RULE", help="extra allow rule")
    p.add_argument("--ask", action="append", default=[], metavar="RULE", help="extra ask rule")
    p.add_argument("--deny", action="append", default=[], metavar="RULE", help="extra deny rule")


def build_parser() -> argparse.ArgumentParser:
    """Return the argparse parser for every subcommand."""
    parser = argparse.ArgumentParser(
        prog="paragents", description="Run several LLM coding-agent sessions side by side."
    )
    parser.add_argument("--version", action="version", version=f"paragents {__version__}")
    add_common(parser)
    parser.add_argument("--record", metavar="FILE", help="write a cassette of this run to FILE (no secrets)")
    sub = parser.add_subparsers(dest="command")

    run = sub.add_parser("run", help="run one prompt headless, with the same engine and store")
    add_common(run)
    which = run.add_mutually_exclusive_group()
    which.add_argument("--session", metavar="NAME", help="continue (or create) this session")
    which.add_argument(
        "--continue",
        dest="continue_",
        action="store_true",
        help="continue the most recent run session (default: each run starts its own session run-N)",
    )
    run.add_argument(
        "--agent",
        metavar="NAME",
        help="run the prompt with an external ACP agent (qwen, opencode, claude, codex, gemini, or "
        "agents.NAME in the config) under paragents' permissions and conflict checks",
    )
    run.add_argument("--max-turns", type=int, metavar="N", help="max model requests in this turn")
    run.add_argument(
        "--max-budget",
        metavar="B",
        help="cap this session's spend: 2.00usd, 500k (tokens), 30m (wall-clock); at the cap the turn "
        "stops before its next request with error kind 'budget' and exit code 7",
    )
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

    acp = sub.add_parser("acp", help="serve paragents as an ACP agent on stdio (Zed, Toad, JetBrains...)")
    add_common(acp)

    add_cassette_parsers(sub)
    add_lanes_parser(sub)  # `paragents lanes ...`, and `run --lane/--base`
    add_fanout_parser(sub, add_common)  # `paragents fanout ...`, `paragents runs list|show`

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

    add_permissions_parser(sub)
    add_approvals_parsers(sub)  # `paragents inbox`, `paragents approve ID`
    add_trust_parsers(sub)  # `paragents trust` (paragents.trust)
    add_serve_parsers(sub, add_common)  # `paragents serve`, `paragents pair` (docs/serve.md)
    add_fanteam_parsers(sub, add_common)  # `paragents review`, `split`, `decisions` (wt/fanteam)
    add_eval_parser(sub)  # `paragents eval run|validate|report|compare|gate` (docs/eval.md)
    return parser


USAGE_ANSWER = "deny | allow-safe | script FILE"
"""``eval run --answer``'s forms."""


def add_eval_parser(sub: Any) -> None:
    """Add ``paragents eval run|validate|report|compare|gate`` (run by :mod:`paragents.cli.eval`)."""
    parser = sub.add_parser("eval", help="run a task set across models and agents; score, compare, gate")
    esub = parser.add_subparsers(dest="eval_command", required=True)

    run = esub.add_parser("run", help="run every task x target x trial, unattended, recorded")
    run.add_argument("--tasks", metavar="PATH|sample", help="a Harbor task dir (or a dir of them), a .jsonl "
                     "of SWE-style instances, or 'sample' (the built-in set)")  # fmt: skip
    run.add_argument("--task", action="append", default=[], metavar="ID", help="only this task (repeatable)")
    run.add_argument(
        "--targets", metavar="T,T", help="model:NAME, model:NAME@URL, agent:NAME (comma separated)"
    )
    run.add_argument("--trials", type=int, default=1, metavar="K", help="trials per task and target (pass@K)")
    run.add_argument("--fanout", type=int, default=1, metavar="N", help="each trial is a best-of-N fan-out")
    run.add_argument("--mode", choices=MODE_CHOICES, help="permission mode of the trials' sessions")
    run.add_argument("--max-budget", metavar="B", help="cap of each trial session: 2.00usd, 500k, 30m")
    run.add_argument("--parallel", type=int, default=1, metavar="N", help="trials running at once")
    run.add_argument("--on", default="local", metavar="local|container|k8s", help="where trials run")
    run.add_argument("--answer", nargs="+", default=["deny"], metavar="POLICY",
                     help=f"who answers the asks: {USAGE_ANSWER} (default deny)")  # fmt: skip
    run.add_argument("--out", metavar="DIR", help="the run's directory (results, cassettes, reports)")
    run.add_argument("--replay", metavar="DIR", help="replay a recorded run without any model; exit 9 when "
                     "its scores differ")  # fmt: skip
    run.add_argument("--dir", metavar="PATH", help="whose config (models, prices, endpoint, lanes) to use")
    run.add_argument("--endpoint", metavar="URL", help="endpoint of model targets without their own @URL")
    for kind in ("allow", "ask", "deny"):
        run.add_argument(f"--{kind}", action="append", default=[], metavar="RULE", help=f"extra {kind} rule")
    run.add_argument("--tui", action="store_true", help="follow the trials in the TUI (asks in its inbox)")
    run.add_argument("--json", action="store_true", help="print the scores as JSON at the end")

    validate = esub.add_parser("validate", help="check a task set: the base fails, the oracle passes")
    validate.add_argument("--tasks", required=True, metavar="PATH|sample")
    validate.add_argument("--task", action="append", default=[], metavar="ID")
    validate.add_argument("--parallel", type=int, default=2, metavar="N")
    validate.add_argument("--json", action="store_true")

    report = esub.add_parser("report", help="write report.md and report.html of a run")
    report.add_argument("run", metavar="DIR")
    report.add_argument("--out", metavar="DIR", help="where to write them (default: the run's directory)")
    report.add_argument("--json", action="store_true", help="print the scores as JSON")

    compare = esub.add_parser("compare", help="per-task changes between two runs, with a bootstrap CI")
    compare.add_argument("--baseline", required=True, metavar="DIR[#TARGET]")
    compare.add_argument("--candidate", required=True, metavar="DIR[#TARGET]")
    compare.add_argument("--json", action="store_true")

    gate = esub.add_parser("gate", help="exit 8 with one line when a run is below a threshold")
    gate.add_argument("run", metavar="DIR")
    gate.add_argument("--min-resolved", type=float, metavar="R", help="least share of trials resolved (0.7)")
    gate.add_argument("--max-regression", type=float, metavar="D", help="most fall against --baseline (0.1)")
    gate.add_argument("--max-cost-per-solve", type=float, metavar="USD")
    gate.add_argument("--baseline", metavar="DIR[#TARGET]")
    gate.add_argument("--target", metavar="LABEL", help="gate only this target of the run")


def cli_rules(args: argparse.Namespace) -> dict[str, list[str]] | None:
    """Return the ``--allow/--ask/--deny`` rules given on the command line, or None when there are none."""
    rules = {k: list(getattr(args, k, []) or []) for k in ("allow", "ask", "deny")}
    return rules if any(rules.values()) else None
