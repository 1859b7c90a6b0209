"""Replay a cassette through the real engine: a real :class:`~paragents.sessions.runtime.Runtime` (store in a
temp state dir, real tools in a temp workspace, the cassette's permissions as the project's
``permissions.json``) against :class:`~paragents.llm.ReplayServer` on 127.0.0.1, which serves each
session its scripted replies in order (routed by the ``X-Paragents-Session`` header = session name).

Determinism: the report is per session (in cassette order) and each session's events are kept in
that session's own order, so the same cassette gives the same report however sessions interleave.
Sessions are isolated from the user's config, permissions and store (temp dirs set through the
``PARAGENTS_*_DIR`` variables for the duration of the replay).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paragents import events as ev
from paragents import trust
from paragents.cassette.answers import AnswerBook, describe_ask, permission_reply
from paragents.cassette.model import Cassette, Reply
from paragents.cassette.report import build_report
from paragents.cassette.session_logs import SessionLogs, call_args
from paragents.llm import ChatClient
from paragents.llm.replay import ReplayServer, ScriptedResponse
from paragents.sessions import Opened, open_sessions

if TYPE_CHECKING:
    from paragents.store.messages import MessagesRepo

_LOOPBACK = re.compile(r"http://127\.0\.0\.1:\d+")

REPLAY_MAX_RETRIES = 1
"""Retries the replay client makes on 5xx/429 (kept small so HTTP-error cassettes stay fast)."""


@contextlib.contextmanager
def isolated_dirs(root: Path) -> Iterator[None]:
    """Point the paragents config/state/managed-settings locations at ``root`` while active (env vars
    ``PARAGENTS_CONFIG_DIR``, ``PARAGENTS_STATE_DIR``, ``PARAGENTS_MANAGED_SETTINGS``), then restore."""
    values = {
        "PARAGENTS_CONFIG_DIR": str(root / "config"),
        "PARAGENTS_STATE_DIR": str(root / "state"),
        "PARAGENTS_MANAGED_SETTINGS": str(root / "managed-permissions.json"),
    }
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, old in saved.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old


def _reached(finished: dict[str, int], name: str, need: int) -> bool:
    return finished[name] >= need


class Player:
    """Plays one cassette. ``pace`` (seconds between network reads) overrides each reply's
    ``delay`` when not None (0: as fast as possible); ``timeout`` bounds the whole replay (seconds);
    ``root`` is the scratch dir (default: a new temp dir; either way it is removed at the end).

    Use :meth:`play` for the report dict (see ``docs/cassettes.md``, "Output")."""

    def __init__(
        self, cassette: Cassette, *, pace: float | None = 0.0, timeout: float = 60.0, root: Path | None = None
    ) -> None:
        self.cassette = cassette
        self.pace = pace
        self.timeout = timeout
        self.book = AnswerBook(cassette.answers)
        self.errors: list[str] = []
        self.warnings: list[str] = []
        if root is not None:
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir(parents=True)
        self.root = root or Path(tempfile.mkdtemp(prefix="paragents-replay-"))
        self.workspace = self.root / "workspace"
        self.journal = SessionLogs(self._normalise)
        self.runtime: Any = None
        self.opened: Opened | None = None
        """The last runtime's session layer with its store (an app built on it can fan out, serve)."""
        self.messages: MessagesRepo | None = None
        """The store's messages of the last runtime (the report reads what each session kept)."""
        self.server: ReplayServer | None = None
        self.ids: dict[str, str] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self.wants_report = True
        """False when the caller only wants the run (the demo): no report, the runtime may be closed."""
        self.runtime_closed = False
        """Set by subclasses whose UI already shut the runtime down."""

    # -- helpers ---------------------------------------------------------------------------------------
    def _normalise(self, text: str) -> str:
        text = _LOOPBACK.sub("<endpoint>", text)
        for base, label in ((self.workspace, "<workspace>"), (self.root, "<replay>")):
            for form in {str(base), str(base.resolve())}:
                text = text.replace(form, label)
        return text

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _write_workspace(self) -> None:
        self.workspace.mkdir(parents=True)
        for rel, content in self.cassette.workspace.items():
            path = self.workspace / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, "utf-8")
        perms = self.cassette.permissions
        if perms is not None:
            if "permissions" not in perms:
                perms = {"permissions": perms}
            import json

            (self.workspace / "permissions.json").write_text(json.dumps(perms, indent=2), "utf-8")
        for spec in self.cassette.sessions:
            if spec.dir:
                (self.workspace / spec.dir).mkdir(parents=True, exist_ok=True)

        # the scratch workspace is the cassette the user chose to play: its files are trusted, in the
        # replay's own state dir (paragents.trust)
        trust.trust(self.workspace, trust.project_posture(self.workspace))

    def _scripted(self, name: str, reply: Reply) -> ScriptedResponse:
        resp = reply.to_scripted()
        delay = float(reply.data.get("delay", 0)) if self.pace is None else self.pace
        cancel = reply.cancel
        if cancel:
            resp.reads.append("")  # a gate after the last real read: "everything was sent"

        async def gate(i: int) -> None:
            if delay and i > 0:
                await asyncio.sleep(delay)
            if cancel and i == len(resp.reads) - 1:
                self._spawn(self._cancel_when_streamed(name, reply.cancel_after_text))

        if delay or cancel:
            resp.before_read = gate
        return resp

    async def _cancel_when_streamed(self, name: str, text: str) -> None:
        log = self.journal.log(name)
        await self.journal.wait_for(lambda: log.streamed.endswith(text))
        self.runtime.cancel(self.ids[name])

    # -- asks --------------------------------------------------------------------------------------------
    def _observe(self, event: ev.Event) -> None:
        if isinstance(event, ev.PermissionRequested):
            self._answer_permission(event)
        elif type(event).__name__ == "ConflictDetected" and hasattr(event, "reply"):
            self._answer_conflict(event)

    def _answer_permission(self, event: ev.PermissionRequested) -> None:
        name = self.journal.names.get(event.session_id, "?")
        args = call_args(event.call)
        answer = self.book.take("permission", name, event.call.name, args)
        if answer is None:
            what = describe_ask(name, event.call.name, args)
            self.errors.append(f"no scripted answer for the approval ask in {self._normalise(what)}")
            reply = ev.PermissionAnswer("reject_once", note="replay: no scripted answer", headless=True)
        else:
            reply = permission_reply(answer, str(self.workspace.resolve()))
        self.deliver_permission(event, reply)

    def deliver_permission(self, event: ev.PermissionRequested, reply: ev.PermissionAnswer) -> None:
        """Resolve the ask with ``reply`` (the TUI player overrides this to press the keys)."""
        if not event.reply.done():
            event.reply.set_result(reply)

    def _answer_conflict(self, event: Any) -> None:
        name = self.journal.names.get(event.session_id, "?")
        call = getattr(event, "call", None)
        args = call_args(call) if call is not None else {"path": getattr(event, "path", "")}
        tool = call.name if call is not None else ""
        answer = self.book.take("conflict", name, tool, args)
        if answer is None:
            self.errors.append(
                f"no scripted answer for the conflict in {self._normalise(describe_ask(name, tool, args))}"
            )
            choice = "skip"
        else:
            choice = answer.answer
        if not event.reply.done():
            event.reply.set_result(choice)

    # -- runtime ---------------------------------------------------------------------------------------
    async def _new_runtime(self) -> Any:
        assert self.server is not None
        c = self.cassette
        overrides: dict[str, Any] = {
            "base_url": self.server.base_url,
            "model": c.model,
            "max_retries": REPLAY_MAX_RETRIES,
            "max_retry_wait": 0.05,
        }
        if c.max_parallel_turns:
            overrides["max_parallel_turns"] = c.max_parallel_turns
        if c.max_tool_rounds:
            overrides["max_tool_rounds"] = c.max_tool_rounds
        client = ChatClient(
            self.server.base_url,
            None,
            connect_timeout=5,
            read_timeout=30,
            max_retries=REPLAY_MAX_RETRIES,
            max_retry_wait=0.05,
            retry_base_delay=0.001,
        )
        opened = await open_sessions(
            self.workspace,
            cli_overrides=overrides,
            db_path=self.root / "state" / "paragents.db",
            env={},
            client=client,
        )
        runtime = opened.api
        runtime.observe(self.journal)
        runtime.observe(self._observe)
        self.runtime = runtime
        self.opened = opened
        self.messages = opened.store.messages
        return runtime

    async def _create_sessions(self, runtime: Any) -> None:
        for spec in self.cassette.sessions:
            workdir = self.workspace / spec.dir if spec.dir else None
            view = await runtime.lifecycle.new_session(
                spec.name, model=spec.model, workdir=workdir, mode=spec.mode
            )
            self.ids[spec.name] = view.id
            self.journal.names[view.id] = spec.name

    async def _restart(self) -> Any:
        await self.runtime.shutdown()
        runtime = await self._new_runtime()
        views = {v.name: v for v in await runtime.opening.restore()}
        for spec in self.cassette.sessions:
            if spec.name not in views:
                self.errors.append(f"restart: session {spec.name} was not restored from the store")
                continue
            self.ids[spec.name] = views[spec.name].id
            self.journal.names[views[spec.name].id] = spec.name
        return runtime

    # -- driving ---------------------------------------------------------------------------------------
    async def drive_phase(self, runtime: Any, phase: int) -> None:
        """Run every session's prompts of ``phase`` (sessions concurrently, prompts in order)."""
        finished = {spec.name: 0 for spec in self.cassette.sessions}
        total = {
            s.name: len(s.phases()[phase]) if phase < len(s.phases()) else 0 for s in self.cassette.sessions
        }
        changed = asyncio.Condition()

        async def session(spec_index: int) -> None:
            spec = self.cassette.sessions[spec_index]
            phases = spec.phases()
            steps = phases[phase] if phase < len(phases) else []
            try:
                for step in steps:
                    if step.after:
                        other, _, count = step.after.partition(":")
                        need = int(count) if count else total[other]
                        async with changed:
                            await changed.wait_for(functools.partial(_reached, finished, other, need))
                    sid = self.ids[spec.name]
                    runtime.submit(sid, step.text or "")
                    await runtime.wait_idle(sid)
                    async with changed:
                        finished[spec.name] += 1
                        changed.notify_all()
            finally:
                async with changed:
                    finished[spec.name] = max(finished[spec.name], total[spec.name])
                    changed.notify_all()

        await asyncio.gather(*(session(i) for i in range(len(self.cassette.sessions))))

    async def run_phase(self, runtime: Any, phase: int) -> None:
        """Headless: a no-op sink (events go to the observers), then :meth:`drive_phase`."""
        runtime.set_sink(lambda event: None)
        await self.drive_phase(runtime, phase)

    async def _play(self) -> dict[str, Any]:
        self._write_workspace()
        async with ReplayServer(models=[self.cassette.model]) as server:
            self.server = server
            for spec in self.cassette.sessions:
                server.add([self._scripted(spec.name, r) for r in spec.replies], session=spec.name)
            runtime = await self._new_runtime()
            try:
                await self._create_sessions(runtime)
                n_phases = max(len(s.phases()) for s in self.cassette.sessions)
                for phase in range(n_phases):
                    if phase:
                        runtime = await self._restart()
                    try:
                        await asyncio.wait_for(self.run_phase(runtime, phase), self.timeout)
                    except TimeoutError:
                        busy = [n for n, sid in self.ids.items() if runtime.prompts.is_running(sid)]
                        self.errors.append(
                            f"replay timed out after {self.timeout:g} s in phase {phase}; still busy: "
                            f"{', '.join(busy) or '(none)'}"
                        )
                        break
                for spec in self.cassette.sessions:
                    left = server.pending(spec.name)
                    if left:
                        self.warnings.append(
                            f"session {spec.name}: {left} scripted "
                            f"repl{'y was' if left == 1 else 'ies were'} not used"
                        )
                for a in self.book.unused():
                    self.warnings.append(f"{a.where} ({a.answer}) was not used")
                report = await build_report(self, runtime, self.messages) if self.wants_report else {}
            finally:
                for task in list(self._tasks):
                    task.cancel()
                if not self.runtime_closed:
                    await self.runtime.shutdown()
        return report

    async def play(self) -> dict[str, Any]:
        """Run the cassette; return the report dict (see ``docs/cassettes.md``). Temp dirs are removed."""
        try:
            with isolated_dirs(self.root):
                return await self._play()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


async def play_cassette(
    cassette: Cassette, *, pace: float | None = 0.0, timeout: float = 60.0
) -> dict[str, Any]:
    """Replay ``cassette`` headless and return the report dict (see :class:`Player`)."""
    return await Player(cassette, pace=pace, timeout=timeout).play()
