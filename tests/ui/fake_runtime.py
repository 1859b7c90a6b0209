"""A deterministic in-memory stand-in for ``paragents.sessions.Runtime`` (snapshot tests only).

It has the facade's attributes and methods; events are fed by the test with :meth:`FakeRuntime.emit`.
No network, no database, fixed ids (s1, s2, ...), so screenshots are stable."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from paragents.config import load_config
from paragents.events import Event, EventSink
from paragents.models import Message, SessionState, Usage


@dataclass
class FakeView:
    """Same attributes as ``runtime.SessionView``."""

    id: str
    name: str
    model: str = "qwen2.5-coder"
    mode: str = "default"
    workdir: Path = Path("/work/project")
    state: SessionState = SessionState.IDLE
    usage: Usage = field(default_factory=Usage)
    context_tokens: int = 0
    context_window: int = 8192
    queue: list[Any] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    pending: dict[str, Any] = field(default_factory=dict)


class FakeRuntime:
    """Facade double: ``views`` are returned by :meth:`restore`; submitted prompts land in ``submitted``."""

    def __init__(self, views: list[FakeView], project_dir: Path) -> None:
        self.project_dir = project_dir
        self.loaded = load_config(
            project_dir, {"base_url": "http://127.0.0.1:8080/v1", "model": "qwen2.5-coder"}
        )
        self.sessions: dict[str, FakeView] = {}
        self._restore = views
        self.notes: list[str] = []
        self.sink: EventSink | None = None
        self.submitted: list[tuple[str, str]] = []
        self.cancelled: list[str] = []

    def set_sink(self, sink: EventSink) -> None:
        self.sink = sink

    def emit(self, event: Event) -> None:
        assert self.sink is not None
        self.sink(event)

    async def restore(self) -> list[FakeView]:
        for v in self._restore:
            self.sessions[v.id] = v
        return list(self._restore)

    async def restore_views(self) -> list[FakeView]:
        return await self.restore()

    async def load_restored(self) -> list[FakeView]:
        return list(self._restore)

    async def new_session(
        self, name: str | None = None, *, model: str | None = None, workdir: Any = None
    ) -> FakeView:
        n = len(self.sessions) + 1
        view = FakeView(f"s{n}", name or f"s{n}", model or "qwen2.5-coder")
        self.sessions[view.id] = view
        return view

    async def close_session(self, sid: str) -> None:
        self.sessions.pop(sid, None)

    def submit(self, sid: str, text: str) -> str:
        self.submitted.append((sid, text))
        return f"p{len(self.submitted)}"

    def cancel(self, sid: str) -> bool:
        self.cancelled.append(sid)
        return True

    def config_rows(self) -> list[tuple[str, str, str]]:
        return [("base_url", "http://127.0.0.1:8080/v1", "cli"), ("api_key", "(none)", "default")]

    async def shutdown(self) -> None:
        pass
