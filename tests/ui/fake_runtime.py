"""A deterministic in-memory stand-in for the session layer (UI and snapshot tests).

:class:`FakeRuntime` implements :class:`paragents.sessions.SessionsAPI` (mypy checks it below) from
small facet fakes, one per facet the UI uses; its views are real ``SessionView``s (:func:`make_view`).
Events are fed by the test with :meth:`FakeRuntime.emit`. No network, no database, fixed ids (s1,
s2, ...), so screenshots are stable."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from paragents.agent.compaction import CompactionOutcome
from paragents.config import LoadedConfig, RuntimeConfig, load_config
from paragents.events import ApprovalAnswer, Event, EventSink, Notice, PermissionAnswer
from paragents.lanes.contained import LaneSandbox
from paragents.limits import Budget, Spend, parse_budget
from paragents.permissions import Policy
from paragents.sessions import SessionsAPI, SessionView
from paragents.sessions.approvals import RulesReport
from paragents.sessions.mcp import McpReport
from paragents.sessions.notes import MemoryReport
from paragents.sessions.view import SessionError
from paragents.store.records import AnswerResult

if TYPE_CHECKING:
    from paragents.backends.base import Placement
    from paragents.backends.lane import RemoteLane
    from paragents.permissions.decision import Decision
    from paragents.sessions.answerer import Answerer
    from paragents.sessions.lane_actions import LaneActions
    from paragents.store.records import ApprovalRecord, DecisionRecord, LaneRecord, NoteRecord, SessionRecord


def make_view(sid: str, name: str, model: str = "qwen2.5-coder", **fields: Any) -> SessionView:
    """A ``SessionView`` for tests: mode "default", workdir /work/project unless ``fields`` say otherwise."""
    fields.setdefault("mode", "default")
    fields.setdefault("workdir", Path("/work/project"))
    return SessionView(sid, name, model, **fields)


class FakeRuntime:
    """Facade double: ``views`` are returned by ``opening.restore()``; submitted prompts land in
    ``submitted``, cancels in ``cancelled``. What a UI test never needs (store, scheduler) is absent."""

    def __init__(self, views: list[SessionView], project_dir: Path) -> None:
        self.project_dir = project_dir
        loaded = load_config(project_dir, {"base_url": "http://127.0.0.1:8080/v1", "model": "qwen2.5-coder"})
        self.sessions: dict[str, SessionView] = {}
        self.notes: list[str] = []
        self.sink: EventSink | None = None
        self.submitted: list[tuple[str, str]] = []
        self.cancelled: list[str] = []
        self.lifecycle = _Lifecycle(self)
        self.opening = _Opening(self, views)
        self.controls = _Controls(self)
        self.prompts = _Prompts()
        self.lanes = _Lanes()
        self.budgets = _Budgets()
        self.approvals = _Approvals(self, Policy.load(project_dir, settings_files=[]))
        self.memory = _Memory()
        self.mcp = _Mcp()
        self.settings = _Settings(loaded)
        self.reservations = _Reservations()

    @property
    def config(self) -> RuntimeConfig:
        return self.settings.loaded.config

    def set_sink(self, sink: EventSink) -> None:
        self.sink = sink

    def observe(self, sink: EventSink) -> None:
        pass

    def unobserve(self, sink: EventSink) -> None:
        pass

    def emit(self, event: Event) -> None:
        """Apply ``event`` to its view and pass it to the app's sink (what the Runtime does)."""
        view = self.sessions.get(event.session_id)
        if view is not None:
            view.apply(event)
        assert self.sink is not None
        self.sink(event)

    def notice(self, sid: str, text: str, level: Literal["info", "warning", "error"] = "info") -> None:
        self.emit(Notice(sid, text, level))

    def submit(self, sid: str, text: str) -> str:
        self.submitted.append((sid, text))
        return f"p{len(self.submitted)}"

    def cancel(self, sid: str) -> bool:
        self.cancelled.append(sid)
        return True

    async def wait_idle(self, sid: str | None = None) -> None:
        pass

    async def shutdown(self) -> None:
        pass


class _Lifecycle:
    def __init__(self, rt: FakeRuntime) -> None:
        self.rt = rt

    async def new_session(
        self,
        name: str | None = None,
        *,
        model: str | None = None,
        workdir: Path | None = None,
        mode: str | None = None,
        open_panel: bool = True,
        lane: str | bool | None = None,
        base: str | None = None,
        on: str | None = None,
    ) -> SessionView:
        n = len(self.rt.sessions) + 1
        view = make_view(f"s{n}", name or f"s{n}", model or "qwen2.5-coder", mode=mode or "default")
        self.rt.sessions[view.id] = view
        return view

    async def new_agent_session(
        self,
        agent: str,
        name: str | None = None,
        *,
        workdir: Path | None = None,
        open_panel: bool = True,
        lane: str | bool | None = None,
        base: str | None = None,
        start: bool = True,
        mode: str | None = None,
    ) -> SessionView:
        return await self.new_session(name, model=f"acp:{agent}", workdir=workdir)

    async def start_new_agent_session(self, sid: str) -> None:
        raise SessionError("this session is not run by an external agent")

    async def close_session(self, sid: str) -> None:
        self.rt.sessions.pop(sid, None)

    async def reopen_session(self, sid: str) -> SessionView:
        return self.rt.sessions[sid]

    async def attach_session(
        self,
        name: str,
        *,
        model: str | None = None,
        workdir: Path | None = None,
        mode: str | None = None,
        take_over: bool = False,
        lane: str | bool | None = None,
        on: str | None = None,
    ) -> tuple[SessionView, bool]:
        return await self.new_session(name, model=model, workdir=workdir, mode=mode), True

    async def clear_session(self, sid: str) -> None:
        self.rt.sessions[sid].messages.clear()

    async def fork(self, sid: str, name: str | None = None) -> SessionView:
        return await self.new_session(name)

    async def take_over(self, sid: str) -> SessionView:
        return self.rt.sessions[sid]

    async def list_sessions(self) -> list[SessionRecord]:
        return []

    async def find_session(self, name: str) -> SessionRecord | None:
        return None


class _Opening:
    def __init__(self, rt: FakeRuntime, views: list[SessionView]) -> None:
        self.rt = rt
        self.views = views

    async def restore(self) -> list[SessionView]:
        for v in self.views:
            self.rt.sessions[v.id] = v
        return list(self.views)

    async def restore_views(self) -> list[SessionView]:
        return await self.restore()

    async def load_restored(self) -> list[SessionView]:
        return list(self.views)

    async def wait_loaded(self) -> None:
        pass


class _Controls:
    def __init__(self, rt: FakeRuntime) -> None:
        self.rt = rt

    async def rename_session(self, sid: str, name: str) -> None:
        self.rt.sessions[sid].name = name

    async def set_model(self, sid: str, model: str) -> None:
        self.rt.sessions[sid].model = model

    async def set_mode(self, sid: str, mode: str) -> None:
        self.rt.sessions[sid].mode = mode

    def set_sandbox(self, sid: str, mode: str) -> None:
        self.rt.sessions[sid].sandbox_mode = mode

    def sandbox_report(self, sid: str) -> str:
        return f"sandbox: {self.rt.sessions[sid].sandbox_mode or 'auto'}"

    def runs_agent(self, sid: str) -> bool:
        return False

    async def agent_mode(self, sid: str, mode: str | None) -> None:
        pass

    async def agent_model(self, sid: str, model: str | None) -> None:
        pass

    def use_tools(self, sid: str, tools: Sequence[str] | None, instructions: Sequence[str] = ()) -> None:
        pass


class _Prompts:
    def __init__(self) -> None:
        self.drafts: dict[str, str] = {}
        """Drafts the UI saved (``save_draft``), by session id."""
        self.holding = False

    def edit_queued(self, sid: str, prompt_id: str, text: str) -> bool:
        return False

    def remove_queued(self, sid: str, prompt_id: str) -> bool:
        return False

    def release_queued(self, sid: str, prompt_id: str | None = None) -> bool:
        return False

    def hold_new_turns(self, hold: bool) -> None:
        self.holding = hold

    async def save_draft(self, sid: str, text: str) -> None:
        self.drafts[sid] = text

    def is_running(self, sid: str) -> bool:
        return False


class _Lanes:
    """Lanes of a runtime without git: none."""

    async def lane_report(self, sid: str) -> str:
        return "no lane (this fake has no git)"

    async def lane_gc(self) -> str:
        return "no lanes"

    def lane_actions(self) -> LaneActions:
        return cast("LaneActions", _NoLanes())

    async def adapt_lane(self, sid: str, other: str | None = None) -> str:
        return "no lane"

    def lane_question(self) -> list[str]:
        return []

    async def lane_overview(self) -> list[str]:
        return []

    def lane_sandbox(self, lane: LaneRecord) -> LaneSandbox:
        return LaneSandbox()

    async def refresh_lane(self, lane: LaneRecord) -> None:
        return None

    def dismiss_lane_conflict(self, key: str) -> bool:
        return False

    async def lane_conflict_sides(self, key: str) -> list[tuple[str, str]]:
        return []

    async def lane_of(self, sid: str) -> LaneRecord | None:
        return None

    def watch_setup(self, output: Callable[[str, str], object] | None) -> None:
        pass

    def place_lane(self, name: str, placement: Placement | None) -> None:
        pass

    def remote_lane(self, lane: LaneRecord) -> RemoteLane | None:
        return None


class _NoLanes:
    """Lane actions of a runtime without git: no lanes to review."""

    async def reviews(self) -> list[Any]:
        return []


class _Budgets:
    def set_budget(self, sid: str, level: str, text: str) -> Budget:
        return parse_budget(text) if text else Budget()

    def join_group(self, sid: str, group_id: str) -> None:
        pass

    def allow_one_more(self, sid: str) -> bool:
        return False

    def stop_paused(self, sid: str) -> bool:
        return False

    def caps(self, sid: str) -> dict[str, Budget | None]:
        return {"session": None, "project_day": None, "group": None}

    def project_cap(self) -> Budget | None:
        return None

    async def today(self, now: float) -> tuple[Spend, float]:
        return Spend(), 0.0

    async def session_seconds(self, sid: str) -> float:
        return 0.0


class _Approvals:
    def __init__(self, rt: FakeRuntime, policy: Policy) -> None:
        self.rt = rt
        self.policy = policy

    async def answer_approval(
        self,
        approval_id: str,
        answer: str,
        answered_by: str = "user",
        note: str | None = None,
        rules: Sequence[str] | None = None,
    ) -> AnswerResult:
        for view in self.rt.sessions.values():
            ask = view.pending.get(approval_id)
            if ask is not None and not ask.reply.done():
                kind = cast("ApprovalAnswer", answer)
                rejects = kind in ("reject_once", "reject_with_note")
                always = tuple(rules or ()) if kind == "allow_always" else ()
                ask.reply.set_result(PermissionAnswer(kind, note=note if rejects else None, rules=always))
                return AnswerResult("accepted", f"approval {approval_id}: answered {answer}")
        return AnswerResult("unknown", f"no approval with id {approval_id!r}")

    async def pending_approvals(
        self, *, all_projects: bool = False, project_dir: Path | None = None
    ) -> list[ApprovalRecord]:
        return []

    async def get_approval(self, approval_id: str) -> ApprovalRecord | None:
        return None

    async def project_of(self, approval_id: str) -> Path | None:
        return None

    async def http_answerer(self, server: tuple[str, int], client: tuple[str, int], by: str) -> Answerer:
        raise NotImplementedError("FakeRuntime serves no HTTP API")

    async def add_session_rules(self, sid: str, rules: list[str]) -> list[str]:
        view = self.rt.sessions[sid]
        view.session_rules = [*view.session_rules, *(r for r in rules if r not in view.session_rules)]
        return view.session_rules

    def rules_report(self) -> RulesReport:
        return RulesReport(self.policy.rules_table(), self.policy.default_mode.value)

    def decide(self, sid: str, tool: str, arguments: dict[str, Any]) -> Decision:
        view = self.rt.sessions[sid]
        return self.policy.decide(tool, arguments, cwd=view.workdir, mode=view.mode)


class _Memory:
    async def compact(self, sid: str, focus: str | None = None) -> CompactionOutcome:
        return CompactionOutcome(False, "nothing to compact")

    async def remember(self, sid: str, text: str, project: bool = False) -> NoteRecord:
        raise NotImplementedError("FakeRuntime stores no notes")

    async def memory(self, sid: str) -> MemoryReport:
        return MemoryReport([], [], [], None)

    async def decide(self, sid: str, text: str) -> DecisionRecord:
        raise NotImplementedError("FakeRuntime stores no decisions")

    async def decisions(self, search: str | None = None) -> list[DecisionRecord]:
        return []


class _Mcp:
    """No MCP servers."""

    def mcp_report(self, sid: str | None = None) -> McpReport:
        return McpReport()

    async def mcp_prompt(self, sid: str, command: str, text: str) -> str:
        return f"{command} {text}"

    async def mcp_restart(self, name: str) -> str:
        return f"no MCP server named '{name}'"


class _Settings:
    def __init__(self, loaded: LoadedConfig) -> None:
        self.loaded = loaded
        self.key_problem: str | None = None

    def config_rows(self) -> list[tuple[str, str, str]]:
        return [("base_url", "http://127.0.0.1:8080/v1", "cli"), ("api_key", "(none)", "default")]

    async def reload_config(self) -> list[tuple[str, str, str]]:
        return []


class _Reservations:
    def __init__(self) -> None:
        self.held: dict[str, int] = {}
        """Reservations the overview shows per session id (a test sets them)."""

    def held_count(self, sid: str) -> int:
        return self.held.get(sid, 0)

    async def reserve(self, sid: str, paths: Sequence[str], reason: str) -> None:
        pass

    async def release(self, sid: str) -> None:
        pass


def _check(runtime: FakeRuntime) -> SessionsAPI:
    """mypy: FakeRuntime implements the whole SessionsAPI protocol."""
    return runtime
