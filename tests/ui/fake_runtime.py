"""A deterministic in-memory stand-in for ``paragents.sessions.Runtime`` (UI and snapshot tests).

:class:`FakeRuntime` implements :class:`paragents.sessions.SessionsAPI` (mypy checks it below); its
views are real ``SessionView``s (:func:`make_view`). Events are fed by the test with
:meth:`FakeRuntime.emit`. No network, no database, fixed ids (s1, s2, ...), so screenshots are stable."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paragents.agent.compaction import CompactionOutcome
from paragents.config import LoadedConfig, RuntimeConfig, load_config
from paragents.events import Event, EventSink
from paragents.limits import Budget, parse_budget
from paragents.permissions import Policy
from paragents.sessions import SessionsAPI, SessionView
from paragents.sessions.mcp import McpReport
from paragents.sessions.notes import MemoryReport
from paragents.sessions.view import SessionError

if TYPE_CHECKING:
    from paragents.scheduler import Scheduler
    from paragents.store import AnswerResult, ApprovalRecord, DecisionRecord, NoteRecord, SessionRecord, Store


def make_view(sid: str, name: str, model: str = "qwen2.5-coder", **fields: Any) -> SessionView:
    """A ``SessionView`` for tests: mode "default", workdir /work/project unless ``fields`` say otherwise."""
    fields.setdefault("mode", "default")
    fields.setdefault("workdir", Path("/work/project"))
    return SessionView(sid, name, model, **fields)


class FakeRuntime:
    """Facade double: ``views`` are returned by :meth:`restore`; submitted prompts land in ``submitted``.
    What a UI test never needs (store, scheduler) raises."""

    def __init__(self, views: list[SessionView], project_dir: Path) -> None:
        self.project_dir = project_dir
        self.loaded: LoadedConfig = load_config(
            project_dir, {"base_url": "http://127.0.0.1:8080/v1", "model": "qwen2.5-coder"}
        )
        self.sessions: dict[str, SessionView] = {}
        self._restore = views
        self.notes: list[str] = []
        self.observers: list[EventSink] = []
        self.sink: EventSink | None = None
        self.submitted: list[tuple[str, str]] = []
        self.cancelled: list[str] = []
        self.drafts: dict[str, str] = {}
        self.holding = False
        """Drafts the UI saved (``save_draft``), by session id."""
        self.policy = Policy.load(project_dir, settings_files=[])
        self.conflicts: Any = None
        """Set by a test that shows held reservations (anything with ``held(sid)``)."""

    @property
    def config(self) -> RuntimeConfig:
        return self.loaded.config

    @property
    def store(self) -> Store:
        raise NotImplementedError("FakeRuntime has no store")

    @property
    def scheduler(self) -> Scheduler:
        raise NotImplementedError("FakeRuntime has no scheduler")

    def set_sink(self, sink: EventSink) -> None:
        self.sink = sink

    def emit(self, event: Event) -> None:
        view = self.sessions.get(event.session_id)
        if view is not None:
            view.apply(event)
        assert self.sink is not None
        self.sink(event)

    # sessions
    async def restore(self) -> list[SessionView]:
        for v in self._restore:
            self.sessions[v.id] = v
        return list(self._restore)

    async def restore_views(self) -> list[SessionView]:
        return await self.restore()

    async def load_restored(self) -> list[SessionView]:
        return list(self._restore)

    async def wait_loaded(self) -> None:
        pass

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
        n = len(self.sessions) + 1
        view = make_view(f"s{n}", name or f"s{n}", model or "qwen2.5-coder", mode=mode or "default")
        self.sessions[view.id] = view
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
        self.sessions.pop(sid, None)

    async def reopen_session(self, sid: str) -> SessionView:
        return self.sessions[sid]

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

    async def lane_report(self, sid: str) -> str:
        return "no lane (this fake has no git)"

    async def lane_reviews(self) -> list[Any]:
        return []

    async def lane_gc(self) -> str:
        return "no lanes"

    def lane_actions(self) -> Any:
        return _NoLanes()

    async def adapt_lane(self, sid: str, other: str | None = None) -> str:
        return "no lane"

    def lane_question(self) -> list[str]:
        return []

    async def lane_overview(self) -> list[str]:
        return []

    def lane_sandbox(self, lane: Any) -> Any:
        from paragents.lanes.contained import LaneSandbox

        return LaneSandbox()

    async def refresh_lane(self, lane: Any) -> None:
        return None

    def dismiss_lane_conflict(self, key: str) -> bool:
        return False

    async def lane_conflict_sides(self, key: str) -> list[tuple[str, str]]:
        return []

    def set_budget(self, sid: str, level: str, text: str) -> Budget:
        return parse_budget(text) if text else Budget()

    def raise_budget(self, sid: str, text: str) -> Budget:
        return self.set_budget(sid, "session", text)

    def allow_one_more(self, sid: str) -> bool:
        return False

    client: Any = None  # fan-out's judge: never asked here

    def join_group(self, sid: str, group_id: str) -> None:
        pass

    async def add_session_rules(self, sid: str, rules: list[str]) -> list[str]:
        view = self.sessions[sid]
        view.session_rules = [*view.session_rules, *(r for r in rules if r not in view.session_rules)]
        return view.session_rules

    def stop_paused(self, sid: str) -> bool:
        return False

    async def answer_approval(
        self,
        approval_id: str,
        answer: str,
        answered_by: str = "user",
        note: str | None = None,
        rules: Sequence[str] | None = None,
    ) -> AnswerResult:
        from paragents.store import AnswerResult

        for view in self.sessions.values():
            ask = view.pending.get(approval_id)
            if ask is not None and not ask.reply.done():
                ask.reply.set_result((answer, note))  # type: ignore[arg-type]
                return AnswerResult("accepted", f"approval {approval_id}: answered {answer}")
        return AnswerResult("unknown", f"no approval with id {approval_id!r}")

    async def pending_approvals(self, *, all_projects: bool = False) -> list[ApprovalRecord]:
        return []

    async def rename_session(self, sid: str, name: str) -> None:
        self.sessions[sid].name = name

    async def set_model(self, sid: str, model: str) -> None:
        self.sessions[sid].model = model

    async def set_mode(self, sid: str, mode: str) -> None:
        self.sessions[sid].mode = mode

    def runs_agent(self, sid: str) -> bool:
        return False

    async def agent_mode(self, sid: str, mode: str | None) -> None:
        pass

    async def agent_model(self, sid: str, model: str | None) -> None:
        pass

    def set_sandbox(self, sid: str, mode: str) -> None:
        self.sessions[sid].sandbox_mode = mode

    def sandbox_report(self, sid: str) -> str:
        return f"sandbox: {self.sessions[sid].sandbox_mode or 'auto'}"

    async def clear_session(self, sid: str) -> None:
        self.sessions[sid].messages.clear()

    async def fork(self, sid: str, name: str | None = None) -> SessionView:
        return await self.new_session(name)

    async def take_over(self, sid: str) -> SessionView:
        return self.sessions[sid]

    async def list_sessions(self) -> list[SessionRecord]:
        return []

    async def find_session(self, name: str) -> SessionRecord | None:
        return None

    # prompts
    def submit(self, sid: str, text: str) -> str:
        self.submitted.append((sid, text))
        return f"p{len(self.submitted)}"

    def hold_new_turns(self, hold: bool) -> None:
        self.holding = hold

    async def save_draft(self, sid: str, text: str) -> None:
        self.drafts[sid] = text

    def edit_queued(self, sid: str, prompt_id: str, text: str) -> bool:
        return False

    def remove_queued(self, sid: str, prompt_id: str) -> bool:
        return False

    def release_queued(self, sid: str, prompt_id: str | None = None) -> bool:
        return False

    def cancel(self, sid: str) -> bool:
        self.cancelled.append(sid)
        return True

    async def wait_idle(self, sid: str | None = None) -> None:
        pass

    # memory
    async def compact(self, sid: str, focus: str | None = None) -> CompactionOutcome:
        return CompactionOutcome(False, "nothing to compact")

    async def remember(self, sid: str, text: str, project: bool = False) -> NoteRecord:
        raise NotImplementedError("FakeRuntime stores no notes")

    async def memory(self, sid: str) -> MemoryReport:
        return MemoryReport([], [], [], None)

    # MCP: no servers
    def mcp_report(self, sid: str | None = None) -> McpReport:
        return McpReport()

    async def mcp_prompt(self, sid: str, command: str, text: str) -> str:
        return f"{command} {text}"

    async def mcp_restart(self, name: str) -> str:
        return f"no MCP server named '{name}'"

    # decisions (wt/fanteam)
    async def decide(self, sid: str, text: str) -> DecisionRecord:
        raise NotImplementedError("FakeRuntime stores no decisions")

    async def decisions(self, search: str | None = None) -> list[DecisionRecord]:
        return []

    # config and end
    def config_rows(self) -> list[tuple[str, str, str]]:
        return [("base_url", "http://127.0.0.1:8080/v1", "cli"), ("api_key", "(none)", "default")]

    async def reload_config(self) -> list[tuple[str, str, str]]:
        return []

    async def shutdown(self) -> None:
        pass


def _check(runtime: FakeRuntime) -> SessionsAPI:
    """mypy: FakeRuntime implements the whole SessionsAPI protocol."""
    return runtime


class _NoLanes:
    """Lane actions of a runtime without git: no lanes to review."""

    async def reviews(self) -> list[Any]:
        return []
