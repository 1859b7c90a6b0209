"""A deterministic in-memory stand-in for the session layer (UI and snapshot tests).

:class:`FakeRuntime` implements :class:`paragents.sessions.SessionsAPI` (mypy checks it below). Its
session-wide members are honest fakes; of the facets it fakes only the members a UI test drives
(measured with a tracing double over every test that builds a FakeRuntime), and every other member,
and the one facet no UI test drives at all (``memory``), is :class:`NotFaked`: touching it fails the
test naming the facet and member, so a test that starts to drive one adds a small fake here. Views are
real ``SessionView``s (:func:`make_view`); events are fed by the test with :meth:`FakeRuntime.emit`. No
network, no database, fixed ids (s1, s2, ...), so screenshots are stable."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from paragents.config import LoadedConfig, RuntimeConfig, load_config
from paragents.events import Event, EventSink, Notice
from paragents.limits import Budget, Spend
from paragents.permissions.settings import PolicyError, parse_rules
from paragents.sessions import SessionsAPI, SessionView
from paragents.sessions.mcp import McpReport
from paragents.sessions.view import SessionError

if TYPE_CHECKING:
    from paragents.store.records import ApprovalRecord


def make_view(sid: str, name: str, model: str = "qwen2.5-coder", **fields: Any) -> SessionView:
    """A ``SessionView`` for tests: mode "default", workdir /work/project unless ``fields`` say otherwise."""
    fields.setdefault("mode", "default")
    fields.setdefault("workdir", Path("/work/project"))
    return SessionView(sid, name, model, **fields)


class NotFaked:
    """The "not here" double of a facet (or of a facet's members no UI test drives): any attribute
    this class (or a subclass) does not define fails the test, naming what was touched.

    mypy still checks the fakes: a class with ``__getattr__`` satisfies a facet Protocol for the
    members it lacks, and the members a subclass defines are checked against the Protocol's
    signatures (:func:`_check`)."""

    def __init__(self, facet: str) -> None:
        self._facet = facet

    def __getattr__(self, member: str) -> Any:
        if member.startswith("__"):  # copy, pickle, inspect and friends probe these: not a use
            raise AttributeError(member)
        facet = self.__dict__.get("_facet", "?")  # not self._facet: that would come back here
        raise AssertionError(
            f"FakeRuntime.{facet}.{member} is not faked: this UI test drove it"
            " (fake it in tests/ui/fake_runtime.py)"
        )


class FakeRuntime:
    """Facade double: ``views`` are returned by ``opening.restore_views()``; submitted prompts land
    in ``submitted``, cancels in ``cancelled``. What a UI test never needs (store, scheduler) is
    absent."""

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
        self.approvals = _Approvals()
        self.memory = NotFaked("memory")
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


class _Lifecycle(NotFaked):
    def __init__(self, rt: FakeRuntime) -> None:
        super().__init__("lifecycle")
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

    async def close_session(self, sid: str) -> None:
        self.rt.sessions.pop(sid, None)


class _Opening(NotFaked):
    def __init__(self, rt: FakeRuntime, views: list[SessionView]) -> None:
        super().__init__("opening")
        self.rt = rt
        self.views = views

    async def restore_views(self) -> list[SessionView]:
        for v in self.views:
            self.rt.sessions[v.id] = v
        return list(self.views)

    async def load_restored(self) -> list[SessionView]:
        return list(self.views)


class _Controls(NotFaked):
    def __init__(self, rt: FakeRuntime) -> None:
        super().__init__("controls")
        self.rt = rt

    async def rename_session(self, sid: str, name: str) -> None:
        self.rt.sessions[sid].name = name


class _Prompts(NotFaked):
    def __init__(self) -> None:
        super().__init__("prompts")
        self.drafts: dict[str, str] = {}
        """Drafts the UI saved (``save_draft``), by session id."""

    async def save_draft(self, sid: str, text: str) -> None:
        self.drafts[sid] = text


class _Lanes(NotFaked):
    """Lanes of a runtime without git: none."""

    def __init__(self) -> None:
        super().__init__("lanes")

    def lane_question(self) -> list[str]:
        return []

    async def lane_overview(self) -> list[str]:
        return []

    def watch_setup(self, output: Callable[[str, str], object] | None) -> None:
        pass


class _Budgets(NotFaked):
    """No caps, nothing spent."""

    def __init__(self) -> None:
        super().__init__("budgets")

    def caps(self, sid: str) -> dict[str, Budget | None]:
        return {"session": None, "project_day": None, "group": None}

    def project_cap(self) -> Budget | None:
        return None

    async def today(self, now: float) -> tuple[Spend, float]:
        return Spend(), 0.0

    async def session_seconds(self, sid: str) -> float:
        return 0.0


class _Approvals(NotFaked):
    """No asks of other processes (the inbox's remote list); the panels' own asks are answered
    through their views' futures."""

    def __init__(self) -> None:
        super().__init__("approvals")

    async def pending_approvals(
        self, *, all_projects: bool = False, project_dir: Path | None = None
    ) -> list[ApprovalRecord]:
        return []

    def check_always_rules(self, rules: Sequence[str]) -> None:
        """The real rule syntax check; no permission files to trust here."""
        try:
            parse_rules(list(rules), "allow", "local", None, "remembered rule")
        except PolicyError as exc:
            raise SessionError(str(exc)) from None


class _Mcp(NotFaked):
    """No MCP servers."""

    def __init__(self) -> None:
        super().__init__("mcp")

    def mcp_report(self, sid: str | None = None) -> McpReport:
        return McpReport()

    async def mcp_prompt(self, sid: str, command: str, text: str) -> str:
        return f"{command} {text}"


class _Settings(NotFaked):
    def __init__(self, loaded: LoadedConfig) -> None:
        super().__init__("settings")
        self.loaded = loaded


class _Reservations(NotFaked):
    def __init__(self) -> None:
        super().__init__("reservations")
        self.held: dict[str, int] = {}
        """Reservations the overview shows per session id (a test sets them)."""

    def held_count(self, sid: str) -> int:
        return self.held.get(sid, 0)


def _check(runtime: FakeRuntime) -> SessionsAPI:
    """mypy: FakeRuntime implements the whole SessionsAPI protocol (each facet's faked members with
    the Protocol's signatures; the rest through :class:`NotFaked`'s ``__getattr__``)."""
    return runtime
