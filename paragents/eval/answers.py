"""Answer policies of ``eval run --answer``: who answers a trial's asks, so runs are unattended and
reproducible (docs/eval.md, "Answer policies").

- ``deny``: every ask is refused (the model is told the eval's policy refused it).
- ``allow-safe``: an ask is allowed when it can only change the trial's own lane: a file tool whose
  every write target is inside the lane, or a command that runs in the sandbox (confined to the lane,
  no network) with known write targets inside the lane and nothing destructive in it (the permission
  layer's one classifier, :mod:`paragents.permissions.destructive`: deleters, ``dd of=``,
  ``find -delete``, destructive git, truncating redirects, interpreter code that deletes or
  overwrites, anything it cannot see into). Anything else is refused.
- ``script FILE``: a JSON file of ordered rules (first match wins), see :class:`AnswerScript`; a rule
  may answer ``ask``, which leaves the ask to a person (the TUI's inbox; headless: refused, saying
  nobody could be asked).

A budget or loop-guard pause is answered ``stop`` (the trial ends there, counted in the burden) unless
a script says ``"budget": "one_more"``. Every answer goes through the store's approvals row
(``answered_by`` = ``eval:<policy>``), so the burden is read back from the store. Nothing here imports
Textual."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from paragents import events as ev
from paragents import jsonfile
from paragents.eval.errors import EvalError
from paragents.permissions.destructive import command_destructive
from paragents.store import StoreError

if TYPE_CHECKING:
    from paragents.sessions.api import SessionsAPI
    from paragents.store.session_events import SessionEventsRepo

AnswerKind = Literal["allow", "deny", "ask", "allow-safe"]
ANSWERED_BY = "eval:"
"""Prefix of ``answered_by`` on the approvals rows an answer policy answered."""
FILE_TOOLS = frozenset({"read_file", "write_file", "edit_file", "list_dir", "glob", "grep"})
COMMAND_TOOLS = frozenset({"run_command"})


class ScriptRule(BaseModel):
    """One rule of an answer script: it matches an ask when each given field matches (``tool`` exactly
    or as a glob; ``command`` and ``path`` as globs, ``*`` matching anything); ``answer`` is allow,
    deny (with an optional ``note`` sent to the model), ask (leave it to a person) or allow-safe."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: str | None = None
    command: str | None = None
    path: str | None = None
    answer: AnswerKind
    note: str | None = None


class AnswerScript(BaseModel):
    """``--answer script FILE``: ``{"answers": [rules...], "default": "deny", "budget": "stop"}``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    answers: tuple[ScriptRule, ...] = ()
    default: AnswerKind = "deny"
    budget: Literal["stop", "one_more"] = "stop"


@dataclass(frozen=True)
class Verdict:
    """What a policy answers one ask: ``allow``, ``deny`` (``note`` told to the model) or ``ask``."""

    answer: Literal["allow", "deny", "ask"]
    note: str = ""


@dataclass(frozen=True)
class Ask:
    """One ask as a policy sees it: the tool, its arguments, the session's lane (working directory),
    whether the command would run sandboxed, and the permission decision behind the ask."""

    tool: str
    args: dict[str, Any]
    lane: Path
    sandboxed: bool | None
    write_targets: tuple[str, ...] = ()
    targets_unknown: bool = False


class AnswerPolicy:
    """A named answer policy (see the module docstring); :meth:`decide` is pure."""

    def __init__(self, name: str, script: AnswerScript | None = None, source: str | None = None) -> None:
        self.name = name
        self.script = script
        self.source = source

    @property
    def budget_answer(self) -> ev.BudgetAnswer:
        """The answer to a budget or loop-guard pause."""
        return self.script.budget if self.script is not None else "stop"

    def describe(self) -> dict[str, Any]:
        """The policy as kept in the run's manifest (the script's rules included)."""
        out: dict[str, Any] = {"name": self.name}
        if self.script is not None:
            out["script"] = self.script.model_dump(exclude_none=True)
        return out

    def decide(self, ask: Ask) -> Verdict:
        if self.name == "deny":
            return Verdict("deny", "refused by the eval's answer policy (deny)")
        if self.name == "allow-safe":
            return allow_safe(ask)
        assert self.script is not None
        for rule in self.script.answers:
            if _matches(rule, ask):
                return _verdict(rule.answer, rule.note, ask)
        return _verdict(self.script.default, None, ask)


def _verdict(kind: AnswerKind, note: str | None, ask: Ask) -> Verdict:
    if kind == "allow-safe":
        return allow_safe(ask)
    if kind == "deny":
        return Verdict("deny", note or "refused by the eval's answer script")
    return Verdict(kind)


def _matches(rule: ScriptRule, ask: Ask) -> bool:
    if rule.tool is not None and not fnmatchcase(ask.tool, rule.tool):
        return False
    if rule.command is not None:
        command = ask.args.get("command")
        if not isinstance(command, str) or not fnmatchcase(command, rule.command):
            return False
    if rule.path is not None:
        path = ask.args.get("path")
        if not isinstance(path, str) or not fnmatchcase(path, rule.path):
            return False
    return True


def _inside(path: str, root: Path) -> bool:
    real = os.path.realpath(path)
    top = os.path.realpath(root)
    return real == top or real.startswith(top.rstrip("/") + "/")


def allow_safe(ask: Ask) -> Verdict:
    """Allow an ask that can only change the lane (see the module docstring); refuse the rest."""
    refuse = "refused by the eval's answer policy (allow-safe): "
    if ask.targets_unknown:
        return Verdict("deny", refuse + "what it writes is only known when it runs")
    outside = [t for t in ask.write_targets if not _inside(t, ask.lane)]
    if outside:
        return Verdict("deny", refuse + f"it writes outside the working directory ({outside[0]})")
    if ask.tool in FILE_TOOLS:
        return Verdict("allow")
    if ask.tool in COMMAND_TOOLS:
        command = ask.args.get("command")
        if not isinstance(command, str):
            return Verdict("deny", refuse + "no command")
        if not ask.sandboxed:
            return Verdict("deny", refuse + "commands run only in the sandbox, which is not on here")
        why = command_destructive(command)
        if why:
            return Verdict("deny", refuse + why)
        return Verdict("allow")
    return Verdict("deny", refuse + f"{ask.tool} is neither a file tool nor a sandboxed command")


def load_policy(spec: str, script: str | None = None) -> AnswerPolicy:
    """The policy ``--answer`` names (``script`` with its FILE). EvalError naming the file and field."""
    if spec in ("deny", "allow-safe"):
        if script:
            raise EvalError(f"--answer {spec} takes no file (only --answer script FILE does)")
        return AnswerPolicy(spec)
    if spec != "script":
        raise EvalError(f"--answer {spec}: use deny, allow-safe or script FILE")
    if not script:
        raise EvalError("--answer script needs a FILE: --answer script answers.json")
    path = Path(script).expanduser()
    try:
        data = jsonfile.load(path)
    except jsonfile.JsonFileError as exc:
        raise EvalError(f"--answer script {script}: {exc.problem}") from None
    return AnswerPolicy("script", parse_script(data, script), str(path))


def parse_script(data: Any, where: str) -> AnswerScript:
    """Validate an answer script (EvalError naming ``where`` and the field)."""
    try:
        return AnswerScript.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise EvalError(f"{where}: {field}: {first['msg']}") from None


class Answerer:
    """Answers the asks and budget pauses of an eval runtime's trial sessions with a policy (an
    observer of the runtime). Asks of other sessions are left alone; an ``ask`` verdict leaves the
    ask pending for a person when ``interactive`` (the TUI), else refuses it saying nobody could be
    asked. ``lanes`` maps session id -> lane path (set by the runner when a trial opens)."""

    def __init__(
        self, rt: SessionsAPI, events: SessionEventsRepo, policy: AnswerPolicy, *, interactive: bool = False
    ) -> None:
        self.rt = rt
        self.events = events
        """Where a budget pause's answer is recorded (the store's session events)."""
        self.policy = policy
        self.interactive = interactive
        self.lanes: dict[str, Path] = {}
        self.left_to_person: set[str] = set()
        self._tasks: set[Any] = set()

    def __call__(self, event: ev.Event) -> None:
        import asyncio

        if event.session_id not in self.lanes:
            return
        if isinstance(event, ev.PermissionRequested):
            task = asyncio.get_running_loop().create_task(self._answer(event))
        elif isinstance(event, ev.BudgetPaused):
            task = asyncio.get_running_loop().create_task(self._pause(event))
        else:
            return
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def ask_of(self, event: ev.PermissionRequested) -> Ask:
        """The :class:`Ask` of ``event``: its call, and the permission decision recomputed for the
        write targets (the policy is pure)."""
        try:
            args = json.loads(event.call.arguments or "{}")
        except ValueError:
            args = {}
        args = args if isinstance(args, dict) else {}
        lane = self.lanes[event.session_id]
        view = self.rt.sessions.get(event.session_id)
        targets: tuple[str, ...] = ()
        unknown = False
        if view is not None and (event.call.name in FILE_TOOLS or event.call.name in COMMAND_TOOLS):
            try:
                decision = self.rt.approvals.decide(event.session_id, event.call.name, args)
                targets, unknown = decision.write_targets, decision.targets_unknown
            except ValueError:
                unknown = True
        return Ask(event.call.name, args, lane, event.sandboxed, tuple(targets), unknown)

    async def _answer(self, event: ev.PermissionRequested) -> None:
        try:
            await self._answer_one(event)
        except (StoreError, ValueError) as exc:  # the ask stays pending: the trial runs into its timeout
            self.rt.notice(event.session_id, f"the eval's answer policy could not answer: {exc}", "error")

    async def _answer_one(self, event: ev.PermissionRequested) -> None:
        verdict = self.policy.decide(self.ask_of(event))
        by = ANSWERED_BY + self.policy.name
        if verdict.answer == "ask":
            if self.interactive:
                self.left_to_person.add(event.request_id)
                return
            verdict = Verdict("deny", "the eval's answer script leaves this to a person, and none is here")
        if verdict.answer == "allow":
            await self.rt.approvals.answer_approval(event.request_id, "allow_once", answered_by=by)
        else:
            await self.rt.approvals.answer_approval(
                event.request_id, "reject_with_note", answered_by=by, note=verdict.note
            )

    async def _pause(self, event: ev.BudgetPaused) -> None:
        answer = self.policy.budget_answer
        data = {"level": event.level, "kind": event.kind, "reason": event.reason, "answer": answer}
        await self.events.record(event.session_id, "budget_pause", data)
        if not event.reply.done():
            event.reply.set_result(answer)
