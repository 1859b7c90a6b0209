"""``paragents run``: one prompt through the same engine and store as the TUI, without the TUI.

Output: the reply streams to stdout rendered with rich (or, with ``--json``, one JSON object at the end:
``{"session", "status", "messages", "usage", "error", "notes"}``; a reply that broke off mid-stream is
in ``messages`` marked ``"incomplete": true``, tool results carry their ``"outcome"``). Recovery notes
of the start (interrupted turns repaired, reservations released, a session taken over) go to stderr
and into ``notes``. Asks are answered on the command line with a
prompt-toolkit prompt when stdin is a terminal (or from another process: ``paragents approve ID``);
without a terminal an ask becomes a denial saying so, unless ``--wait-approvals`` leaves it pending
for another process to answer.
Exit codes: 0 done, 1 runtime failure (``error.kind`` "store": the database could not be written),
2 config or auth, 3 endpoint protocol error, 4 the session is held by another live process (pass
``--take-over`` to take it), 130 cancelled.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape as _markup_escape

from paragents import events as ev
from paragents.cli.exit_codes import EXIT_CONFIG, EXIT_HELD, exit_code_for
from paragents.cli.open_runtime import OpenFailed, open_runtime, project_dir_of
from paragents.limits import BudgetError, parse_budget
from paragents.models import Usage
from paragents.sessions import SessionError
from paragents.sessions.acp import agent_of
from paragents.store import SessionHeld
from paragents.terminal_text import StreamCleaner, show_controls, strip_controls
from paragents.tools.output import strip_ansi


def escape(text: str) -> str:
    """Untrusted text for Rich markup: escape sequences and control characters removed (a model's
    OSC 52 or title change must not reach the terminal), markup escaped."""
    return _markup_escape(strip_controls(text))


class HeadlessSink:
    """Event sink for ``paragents run``: prints the stream (unless ``json_mode``) and answers asks."""

    def __init__(
        self, console: Console, *, json_mode: bool, interactive: bool, err: Console | None = None
    ) -> None:
        self.console = console
        self.err = err or Console(stderr=True, highlight=False)
        self.json_mode = json_mode
        self.interactive = interactive
        self._in_reasoning = False
        self._ask_lock = asyncio.Lock()
        self.notices: list[str] = []
        """With ``json_mode``: the notices of the run (MCP servers not started, retries ...), for
        ``notes`` (each is also printed to stderr)."""
        self.wait_approvals = False
        """Without a terminal, leave asks pending for another process to answer (``--wait-approvals``)."""
        self._text = StreamCleaner()
        self._reasoning = StreamCleaner()
        """Streamed text and reasoning without escape sequences, also when one is cut between chunks."""

    def __call__(self, event: ev.Event) -> None:
        if isinstance(event, ev.BudgetPaused):  # nobody can raise a cap here: stop (exit code 7)
            if not event.reply.done():
                event.reply.set_result("stop")
            return
        if isinstance(event, ev.Notice) and self.json_mode:  # start-up notices (MCP servers ...) too
            self.notices.append(event.text)
            self.err.print(f"note: {strip_controls(event.text)}", markup=False, style="yellow")
            return
        if isinstance(event, ev.PermissionRequested):
            asyncio.get_running_loop().create_task(self._answer(event))
            return
        if isinstance(event, ev.ConflictDetected):
            if self.interactive:
                asyncio.get_running_loop().create_task(self._answer_conflict(event))
            elif not self.json_mode:
                self.err.print(
                    f"[yellow]conflict: {escape(event.summary)} ({event.kind} on {escape(event.path)}"
                    f"{', held by ' + escape(event.holder) if event.holder else ''}); waiting[/]"
                )
            return
        if self.json_mode:
            return
        out = self.console
        if isinstance(event, ev.ReasoningDelta):
            if not self._in_reasoning:
                out.print("[dim italic]thinking: [/]", end="")
                self._in_reasoning = True
            out.print(
                self._reasoning.feed(event.text), style="dim italic", end="", markup=False, highlight=False
            )
        elif isinstance(event, ev.TextDelta):
            if self._in_reasoning:
                out.print(self._reasoning.flush(), style="dim italic", markup=False, highlight=False)
                self._in_reasoning = False
            out.print(self._text.feed(event.text), end="", markup=False, highlight=False)
        elif isinstance(event, ev.ToolCallStarted):
            out.print(self._text.flush(), markup=False, highlight=False)
            marker = " [dim](sandboxed)[/]" if event.sandboxed else ""
            out.print(f"[bold cyan]⏵ {escape(event.summary)}[/]{marker}")
        elif isinstance(event, ev.ToolCallFinished):
            first = event.output.splitlines()[0] if event.output else ""
            style = "green" if event.status == "ok" else "red"
            out.print(f"[{style}]  {event.status}[/] [dim]{escape(first[:120])}[/]")
        elif isinstance(event, ev.Notice):
            style = {"info": "dim", "warning": "yellow", "error": "bold red"}[event.level]
            out.print()
            target = self.err if event.level == "error" else out
            target.print(f"[{style}]{escape(event.text)}[/]")
        elif isinstance(event, ev.TurnFinished):
            out.print(self._text.flush() + self._reasoning.flush(), markup=False, highlight=False)
            if event.error and event.status == "failed":
                self.err.print(f"[bold red]{escape(event.error)}[/]")

    async def _answer(self, event: ev.PermissionRequested) -> None:
        elsewhere = f"paragents approve {event.request_id} [--session-wide|--always|--deny]"
        if not self.interactive:
            if self.wait_approvals:  # another process answers the row (paragents approve, the API)
                self.err.print(
                    f"waiting for an answer to {strip_controls(event.summary)}: {elsewhere}", markup=False
                )
            elif not event.reply.done():
                event.reply.set_result(
                    ev.PermissionAnswer(
                        "reject_once", note=f"no terminal to ask ({event.reason})", headless=True
                    )
                )
            return
        async with self._ask_lock:
            if event.reply.done():
                return
            prompt = asyncio.ensure_future(self._prompt(event))
            either: set[asyncio.Future[Any]] = {prompt, event.reply}
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
            if not prompt.done():  # answered from another process: stop asking here
                prompt.cancel()
                await asyncio.gather(prompt, return_exceptions=True)
                self.console.print("\n[dim]answered elsewhere[/]")
                return
        answer = prompt.result()
        if not event.reply.done():
            event.reply.set_result(answer)

    async def _answer_conflict(self, event: ev.ConflictDetected) -> None:
        from prompt_toolkit import PromptSession

        keys: dict[str, ev.ConflictAnswer] = {"w": "wait", "r": "run_anyway", "s": "skip", "e": "reread"}
        offered = {k: v for k, v in keys.items() if v in event.choices}
        async with self._ask_lock:
            if event.reply.done():
                return
            out = self.console
            out.print()
            holder = f" held by {escape(event.holder)}" if event.holder else ""
            out.print(
                f"[bold yellow]Conflict: {escape(event.summary)}[/] "
                f"[dim]{event.kind} on {escape(event.path)}{holder}[/]"
            )
            if event.diff:
                out.print(strip_controls(event.diff), markup=False, highlight=False)
            labels = {"w": "wait", "r": "run anyway", "s": "skip", "e": "re-read first"}
            out.print("  " + "  ".join(f"[bold]{k}[/] {labels[k]}" for k in offered))
            session: PromptSession[str] = PromptSession()
            while not event.reply.done():
                choice = (await session.prompt_async("> ")).strip().lower()
                if choice in offered and not event.reply.done():
                    event.reply.set_result(offered[choice])
                    return
                out.print("answer " + ", ".join(offered))

    async def _prompt(self, event: ev.PermissionRequested) -> ev.PermissionAnswer:
        from prompt_toolkit import PromptSession

        out = self.console
        out.print()
        # a command's control characters drawn as symbols (ESC as "␛"): never sent to the terminal
        summary, reason = show_controls(event.summary), show_controls(event.reason)
        out.print(f"[bold yellow]Allow {escape(summary)}?[/] [dim]{escape(reason)}[/]")
        print_preview(out, event)
        rules = ", ".join(event.suggested_rules) or "(none)"
        agent = bool(event.agent_options)  # an external agent's ask: a note could not reach it
        out.print(
            "  [bold]y[/] allow once  [bold]s[/] allow for this session  "
            f"[bold]a[/] always allow ({escape(rules)})  [bold]n[/] deny"
            + ("" if agent else "  [bold]d[/] deny with a note")
        )
        out.print(
            f"  (or from another terminal: paragents approve {event.request_id} "
            "[--session-wide|--always|--deny])",
            style="dim",
            markup=False,
        )
        session: PromptSession[str] = PromptSession()
        while True:
            choice = (await session.prompt_async("> ")).strip().lower()
            if choice in ("y", "yes"):
                return ev.PermissionAnswer("allow_once")
            if choice == "s":
                return ev.PermissionAnswer("allow_session")
            if choice == "a":
                edited = await session.prompt_async("rules to store (comma separated): ", default=rules)
                return ev.PermissionAnswer(
                    "allow_always", rules=tuple(r.strip() for r in edited.split(",") if r.strip())
                )
            if choice in ("n", "no"):
                return ev.PermissionAnswer("reject_once")
            if choice == "d" and not agent:
                note = await session.prompt_async("note to the model: ")
                return ev.PermissionAnswer("reject_with_note", note=note)
            out.print("answer y, s, a or n" if agent else "answer y, s, a, n or d")


RUN_SESSION = re.compile(r"^run(-\d+)?$")
"""Names of the sessions ``paragents run`` creates without ``--session`` (``run`` is the pre-0.2 one)."""


async def _run_session(runtime: Any, args: Any, project_dir: Path, err: Console) -> Any:
    """Return the session of a run without ``--session``: a new ``run-N`` one, or with ``--continue``
    the most recently used run session (a new one when there is none). Raises SessionError."""
    records = [r for r in await runtime.lifecycle.list_sessions() if RUN_SESSION.match(r.name)]
    if getattr(args, "continue_", False):
        if records:
            latest = max(records, key=lambda r: (r.updated_at, r.created_at))
            view, _created = await runtime.lifecycle.attach_session(
                latest.name,
                model=args.model,
                workdir=project_dir,
                mode=args.mode,
                take_over=bool(getattr(args, "take_over", False)),
            )
            return view
        err.print("paragents run: no earlier run session to continue; starting a new one", style="dim")
    number = max((int(r.name[4:] or 0) for r in records), default=0) + 1
    for attempt in range(5):  # another run may take the same number at the same moment
        try:
            return await runtime.lifecycle.new_session(
                f"run-{number + attempt}",
                model=args.model,
                workdir=project_dir,
                mode=args.mode,
                open_panel=False,
                lane=getattr(args, "lane", None),
                base=getattr(args, "base", None),
                on=getattr(args, "on", None),
            )
        except SessionError as exc:
            if "already exists" not in str(exc) or attempt == 4:
                raise
    raise AssertionError("unreachable")


def print_preview(out: Console, event: ev.PermissionRequested) -> None:
    """Print what the asked call will do (its preview) and the rule that asked, as inert text."""
    from rich.syntax import Syntax
    from rich.text import Text

    rule = f"rule: {event.rule} ({event.rule_scope})" if event.rule else "rule: none matched"
    out.print(Text("  " + strip_ansi(rule), style="dim"))
    preview = event.preview
    if preview is None:
        return
    head = " · ".join(part for part in (preview.detail, preview.cwd and f"in {preview.cwd}") if part)
    if head:
        out.print(Text("  " + strip_ansi(head), style="dim"))
    if preview.kind == "diff" and preview.text:
        out.print(Syntax(strip_ansi(preview.text), "diff", theme="ansi_dark", word_wrap=True))
    elif preview.text:
        prefix = "$ " if preview.kind == "command" else ""
        out.print(Text(prefix + strip_ansi(preview.text)))
    if preview.omitted:
        out.print(Text(f"  … {preview.omitted} more lines", style="dim"))
    if preview.problem:
        out.print(Text(f"  will fail: {strip_ansi(preview.problem)}", style="red"))


async def run_headless(args: Any) -> int:
    """Run ``paragents run`` with parsed ``args``; return the exit code (never raises for user errors)."""
    prog = "paragents run"
    console = Console(stderr=False, highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False, soft_wrap=True)  # one line per error, never cut
    max_budget = getattr(args, "max_budget", None)
    if max_budget is not None:
        try:
            parse_budget(max_budget)
        except BudgetError as exc:
            err.print(f"{prog}: --max-budget: {exc}", markup=False)
            return EXIT_CONFIG
    try:
        project_dir = project_dir_of(args, prog)
        extra = {"max_tool_rounds": args.max_turns} if args.max_turns is not None else None
        opened = await open_runtime(
            args, project_dir, prog=prog, extra_overrides=extra, require_config=True, require_model=True
        )
    except OpenFailed as exc:
        return exc.code
    runtime = opened.api
    sink = HeadlessSink(
        console, json_mode=args.json, interactive=sys.stdin.isatty() and not args.json, err=err
    )
    sink.wait_approvals = bool(getattr(args, "wait_approvals", False))
    runtime.set_sink(sink)
    status, error, kind = "failed", None, None
    messages: list[dict[str, Any]] = []
    usage = Usage()
    name = args.session or "run"
    notes = runtime.notes
    if getattr(args, "lane", None):  # a lane's setup, live
        runtime.lanes.watch_setup(
            lambda lane, line: err.print(f"[{lane} setup] {strip_controls(line)}", markup=False)
        )
    try:
        try:
            take_over = bool(getattr(args, "take_over", False))
            agent = getattr(args, "agent", None)
            if agent and (not args.session or await runtime.lifecycle.find_session(args.session) is None):
                runs = [r for r in await runtime.lifecycle.list_sessions() if RUN_SESSION.match(r.name)]
                number = max((int(r.name[4:] or 0) for r in runs), default=0) + 1
                view = await runtime.lifecycle.new_agent_session(
                    agent,
                    args.session or f"run-{number}",
                    workdir=project_dir,
                    open_panel=False,
                    lane=getattr(args, "lane", None),
                    base=getattr(args, "base", None),
                    start=False,
                    mode=args.mode,
                )
            elif args.session:
                view, _created = await runtime.lifecycle.attach_session(
                    args.session,
                    model=args.model,
                    workdir=project_dir,
                    mode=args.mode,
                    take_over=take_over,
                    lane=getattr(args, "lane", None),
                    on=getattr(args, "on", None),
                )
            else:
                view = await _run_session(runtime, args, project_dir, err)
            name = view.name
            _headless_agent(runtime, view.id)
        except SessionError as exc:
            err.print(f"paragents run: {exc}", markup=False)
            return EXIT_CONFIG
        except SessionHeld as exc:
            err.print(
                f"paragents run: {exc}; wait until it is done with it, or pass --take-over to take "
                "it over (that process then can no longer write to it)",
                markup=False,
            )
            return EXIT_HELD
        for note in notes:
            err.print(f"note: {strip_controls(note)}", markup=False, style="yellow")
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, lambda: runtime.cancel(view.id))
        if max_budget is not None:
            runtime.budgets.set_budget(view.id, "session", max_budget)
        runtime.submit(view.id, args.prompt)
        await runtime.wait_idle(view.id)
        lost = await _lost(opened.store, view.id, view.name)
        if lost is not None:
            err.print(f"{prog}: {lost}", markup=False, style="bold red")
            notes = [*notes, lost]
        result = view.last_result
        if result is not None:
            status = result.status.value
            error, kind = result.error, result.error_kind
            messages = result.messages
            usage = result.usage
    finally:
        await runtime.shutdown()
    if not args.json and not args.session:
        err.print(f"session {name} (continue it with --continue or --session {name})", style="dim")
    if args.json:
        out = {
            "session": name,
            "status": status,
            "messages": messages,
            "usage": usage.to_dict(),
            "error": None if error is None else {"kind": kind or "error", "message": error},
            "notes": [*notes, *(n for n in sink.notices if n not in notes)],
        }
        print(json.dumps(out, ensure_ascii=False))
    return exit_code_for(status, kind)


async def _lost(store: Any, sid: str, name: str) -> str | None:
    """What to say when another process took session ``sid`` over while this run used it (``paragents
    run --take-over``, the TUI's /takeover): the session by its name and id, who has it, and how to go
    on; None while this process still holds it."""
    if not await store.holders.renew([sid]):
        return None
    holder = await store.holders.get(sid)
    who = holder.describe() if holder is not None else "another process (done with it since)"
    return (
        f"session {name!r} (id {sid}) was taken over by {who} while this run used it: this run stopped,"
        f" what both wrote is kept; go on with `paragents run --session {name} PROMPT`"
    )


def _headless_agent(runtime: Any, sid: str) -> None:
    """An external agent that cannot continue a stored session (no session/load nor session/resume)
    starts a new agent session with a note when run headless (no panel to ask in)."""
    agent = agent_of(runtime, sid)
    if agent is not None:
        agent.wait.auto_new = True
