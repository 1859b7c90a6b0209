"""The runtime: the composition root every client (TUI, ``paragents run``, replay, demo) drives.

It builds the session layer's parts on the shared state (:class:`~paragents.sessions.core.SessionsCore`:
config, store, policy, chat client, scheduler, one ``Agent`` per open session) and offers their
commands (:class:`~paragents.sessions.api.SessionsAPI`). Clients call its methods ("attributes down")
and receive every core event through the one sink set with :meth:`Runtime.set_sink` ("messages up").
Nothing here imports Textual.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paragents.agent.compaction import CompactionOutcome
from paragents.config import (
    ConfigError,
    MissingKeyError,
    RuntimeConfig,
    describe_config,
    load_config,
    require_trusted_files,
)
from paragents.conflicts import UNATTENDED_WAIT
from paragents.llm.recording import ACTIVE_RECORDER, Recorder
from paragents.sessions import approvals
from paragents.sessions.api import SessionsAPI
from paragents.sessions.core import SessionsCore
from paragents.sessions.holds import BUSY_STATES, SessionHolds
from paragents.sessions.lifecycle import MODE_NAMES, SessionLifecycle
from paragents.sessions.mcp import McpReport, mcp_report
from paragents.sessions.memory import MemoryCommands
from paragents.sessions.notes import MemoryReport
from paragents.sessions.opening import SessionOpening
from paragents.sessions.view import SessionError, SessionView
from paragents.trust import PERMISSION_FILES

if TYPE_CHECKING:
    from paragents.lanes.contained import LaneSandbox
    from paragents.limits import Budget
    from paragents.llm import ChatClient
    from paragents.permissions import Policy
    from paragents.store import (
        AnswerResult,
        ApprovalRecord,
        DecisionRecord,
        LaneRecord,
        NoteRecord,
        SessionRecord,
        Store,
    )


class Runtime(SessionsCore):
    """The session layer for one project directory. Build it with :meth:`create`."""

    def __init__(
        self, project_dir: Path, loaded: Any, store: Store, policy: Policy, client: ChatClient
    ) -> None:
        super().__init__(project_dir, loaded, store, policy, client)
        self.holding = SessionHolds(self)
        self.opening = SessionOpening(self, self.holding)
        self.lifecycle = SessionLifecycle(self, self.opening)
        self.memory_commands = MemoryCommands(self)

    @classmethod
    async def create(
        cls,
        project_dir: Path,
        *,
        cli_overrides: Mapping[str, Any] | None = None,
        db_path: Path | None = None,
        cli_rules: dict[str, list[str]] | None = None,
        env: Mapping[str, str] | None = None,
        client: Any = None,
        recorder: Recorder | None = None,
        keyless_ok: bool = False,
    ) -> Runtime:
        """Load config and policy for ``project_dir``, open the store, build the chat client.

        ``cli_overrides`` are config values from the command line; ``cli_rules`` permission rules from
        ``--allow/--ask/--deny``. Raises ConfigError (bad config or missing key env var) or
        PolicyError (unreadable permission files: the runtime fails closed). ``recorder`` (default:
        :data:`ACTIVE_RECORDER`) receives every raw response and is attached to the runtime.
        ``keyless_ok`` (the TUI): an ``api_key_env`` that is not set does not raise; the client goes
        without a key and ``key_problem`` says why (the TUI opens /setup with it)."""
        from paragents import paths
        from paragents.permissions import Policy
        from paragents.store import Store

        project_dir = project_dir.resolve()
        loaded = load_config(project_dir, cli_overrides, env)
        policy = Policy.load(project_dir, cli_rules=cli_rules)
        require_trusted_files(project_dir, PERMISSION_FILES)  # its allow rules are the user's to accept
        recorder = recorder if recorder is not None else ACTIVE_RECORDER.get()
        key_problem = None
        if client is None:
            try:
                client = make_client(loaded.config, recorder, env)
            except MissingKeyError as exc:
                if not keyless_ok:
                    raise
                key_problem = str(exc)
                keyless = loaded.config.model_copy(update={"api_key_env": None})
                client = make_client(keyless, recorder, env)
        store = await Store.open(db_path or paths.db_path())
        runtime = cls(project_dir, loaded, store, policy, client)
        runtime.key_problem = key_problem
        runtime.notes.extend(policy.notes)  # ignored settings keys, "auto" mode, /etc-style rules
        if key_problem:
            runtime.notes.append(f"{key_problem} (the setup screen is open for it)")
        runtime.cli_overrides = dict(cli_overrides or {})
        runtime.env = env
        if recorder is not None:
            runtime.recorder = recorder
            recorder.attach(runtime)
        if store.recovery_note:
            runtime.notes.append(store.recovery_note)
        dead_note = await runtime.conflicts.release_dead()
        if dead_note:
            runtime.notes.append(dead_note)
        if not _stdin_is_terminal():
            runtime.conflicts.unattended_wait = UNATTENDED_WAIT
        runtime.notes.extend(await store.recover_interrupted(os.getpid()))
        runtime.notes.extend(await approvals.close_orphan_conflicts(runtime))
        return runtime

    # -- approvals (paragents.sessions.approvals) -----------------------------------------------------
    async def answer_approval(
        self,
        approval_id: str,
        answer: str,
        answered_by: str = "user",
        note: str | None = None,
        rules: Sequence[str] | None = None,
    ) -> AnswerResult:
        """Answer a pending approval or conflict row (first answer wins; a later one is refused naming
        it). The turn waiting on it in this process continues at once. See
        :func:`paragents.sessions.approvals.answer_approval`."""
        return await approvals.answer_approval(self, approval_id, answer, answered_by, note, rules)

    async def pending_approvals(self, *, all_projects: bool = False) -> list[ApprovalRecord]:
        """The pending approval and conflict rows of this project (of every project), oldest first."""
        return await approvals.pending_approvals(self, all_projects=all_projects)

    # -- sessions (paragents.sessions.lifecycle) -------------------------------------------------------
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
        """See :meth:`SessionLifecycle.new_session`."""
        return await self.lifecycle.new_session(
            name, model=model, workdir=workdir, mode=mode, open_panel=open_panel, lane=lane, base=base, on=on
        )

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
        """A session run by the external ACP agent ``agent`` (see paragents.sessions.acp); ``mode``
        is the permission mode its requests are decided in (default: the settings' defaultMode)."""
        from paragents.sessions import acp

        return await acp.new_agent_session(
            self,
            self.lifecycle,
            agent,
            name,
            workdir=workdir,
            open_panel=open_panel,
            lane=lane,
            base=base,
            start=start,
            mode=mode,
        )

    async def start_new_agent_session(self, sid: str) -> None:
        """``/agent new``: a new external agent session in ``sid`` (see paragents.sessions.acp)."""
        from paragents.sessions import acp

        await acp.start_new_remote(self, sid)

    async def close_session(self, sid: str) -> None:
        """See :meth:`SessionLifecycle.close_session`."""
        await self.lifecycle.close_session(sid)

    async def reopen_session(self, sid: str) -> SessionView:
        """See :meth:`SessionLifecycle.reopen_session`."""
        return await self.lifecycle.reopen_session(sid)

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
        """See :meth:`SessionLifecycle.attach_session`."""
        return await self.lifecycle.attach_session(
            name, model=model, workdir=workdir, mode=mode, take_over=take_over, lane=lane, on=on
        )

    async def rename_session(self, sid: str, name: str) -> None:
        """See :meth:`SessionLifecycle.rename_session`."""
        await self.lifecycle.rename_session(sid, name)

    async def set_model(self, sid: str, model: str) -> None:
        """See :meth:`SessionLifecycle.set_model`."""
        await self.lifecycle.set_model(sid, model)

    async def set_mode(self, sid: str, mode: str) -> None:
        """See :meth:`SessionLifecycle.set_mode`."""
        await self.lifecycle.set_mode(sid, mode)

    def runs_agent(self, sid: str) -> bool:
        """True when an external ACP agent runs session ``sid`` (``/mode`` and ``/model`` address it)."""
        from paragents.sessions.acp_controls import runs_agent

        return runs_agent(self, sid)

    async def agent_mode(self, sid: str, mode: str | None) -> None:
        """See :func:`paragents.sessions.acp_controls.agent_mode`."""
        from paragents.sessions.acp_controls import agent_mode

        await agent_mode(self, sid, mode)

    async def agent_model(self, sid: str, model: str | None) -> None:
        """See :func:`paragents.sessions.acp_controls.agent_model`."""
        from paragents.sessions.acp_controls import agent_model

        await agent_model(self, sid, model)

    def set_sandbox(self, sid: str, mode: str) -> None:
        """See :meth:`SessionLifecycle.set_sandbox`."""
        self.lifecycle.set_sandbox(sid, mode)

    def sandbox_report(self, sid: str) -> str:
        """See :meth:`SessionLifecycle.sandbox_report`."""
        return self.lifecycle.sandbox_report(sid)

    async def lane_reviews(self) -> list[Any]:
        """Reviews of this project's lanes (:func:`paragents.lanes.review.lane_reviews`)."""
        from paragents.lanes import LaneError
        from paragents.lanes.review import lane_reviews
        from paragents.sessions.view import SessionError

        try:
            return list(await lane_reviews(self.store, self.project_dir))
        except LaneError as exc:
            raise SessionError(f"lanes: {exc}") from exc

    def lane_actions(self) -> Any:
        """The Lanes review screen's actions (:class:`paragents.sessions.lane_actions.LaneActions`)."""
        from paragents.sessions.lane_actions import LaneActions

        return LaneActions(self)

    async def adapt_lane(self, sid: str, other: str | None = None) -> str:
        """Queue a prompt asking the session's agent to adapt to the conflicts predicted for its lane
        (with ``other`` only) (:func:`paragents.sessions.lanes.adapt_prompt`); return the prompt's id."""
        from paragents.sessions.lanes import adapt_prompt

        return self.submit(sid, await adapt_prompt(self, sid, other))

    def lane_question(self) -> list[str]:
        """See :func:`paragents.sessions.lanes.lane_question`."""
        from paragents.sessions.lanes import lane_question

        return lane_question(self)

    async def lane_overview(self) -> list[str]:
        """See :func:`paragents.sessions.lanes.lane_overview`."""
        from paragents.sessions.lanes import lane_overview

        return await lane_overview(self)

    def lane_sandbox(self, lane: LaneRecord) -> LaneSandbox:
        """Where paragents' own commands in ``lane`` run: its sandbox here, or its container/Pod."""
        from paragents.sessions.lanes import lane_sandbox

        return lane_sandbox(self, lane)

    async def refresh_lane(self, lane: LaneRecord) -> None:
        """Bring a remote lane's work into its worktree here and this machine's commits to it (a
        local lane: nothing). SessionError when its place does not answer."""
        await self.remote.refresh(lane)

    def dismiss_lane_conflict(self, key: str) -> bool:
        """Hide the predicted lane conflict ``key`` until the prediction changes."""
        return bool(self.lane_watcher is not None and self.lane_watcher.dismiss(key))

    async def lane_conflict_sides(self, key: str) -> list[tuple[str, str]]:
        """See :func:`paragents.sessions.lanes.conflict_sides`."""
        from paragents.sessions.lanes import conflict_sides

        return await conflict_sides(self, key)

    async def lane_gc(self) -> str:
        """See :func:`paragents.sessions.lanes.lane_gc`."""
        from paragents.sessions.lanes import lane_gc

        return await lane_gc(self)

    async def lane_report(self, sid: str) -> str:
        """See :func:`paragents.sessions.lanes.lane_report`."""
        from paragents.sessions.lanes import lane_report

        return await lane_report(self, sid)

    async def clear_session(self, sid: str) -> None:
        """See :meth:`SessionLifecycle.clear_session`."""
        await self.lifecycle.clear_session(sid)

    async def fork(self, sid: str, name: str | None = None) -> SessionView:
        """See :meth:`SessionLifecycle.fork`."""
        return await self.lifecycle.fork(sid, name)

    async def list_sessions(self) -> list[SessionRecord]:
        """See :meth:`SessionLifecycle.list_sessions`."""
        return await self.lifecycle.list_sessions()

    async def find_session(self, name: str) -> SessionRecord | None:
        """See :meth:`SessionLifecycle.find_session`."""
        return await self.lifecycle.find_session(name)

    async def take_over(self, sid: str) -> SessionView:
        """See :meth:`SessionHolds.take_over`."""
        return await self.holding.take_over(sid)

    async def check_holds(self) -> list[str]:
        """See :meth:`SessionHolds.check_holds`."""
        return await self.holding.check_holds()

    # -- restore (paragents.sessions.opening) ---------------------------------------------------------
    async def restore(self) -> list[SessionView]:
        """See :meth:`SessionOpening.restore`."""
        return await self.opening.restore()

    async def restore_views(self) -> list[SessionView]:
        """See :meth:`SessionOpening.restore_views`."""
        return await self.opening.restore_views()

    async def load_restored(self) -> list[SessionView]:
        """See :meth:`SessionOpening.load_restored`."""
        return await self.opening.load_restored()

    async def wait_loaded(self) -> None:
        """See :meth:`SessionOpening.wait_loaded`."""
        await self.opening.wait_loaded()

    # -- memory (paragents.sessions.memory) -----------------------------------------------------------
    async def compact(self, sid: str, focus: str | None = None) -> CompactionOutcome:
        """See :meth:`MemoryCommands.compact`."""
        return await self.memory_commands.compact(sid, focus)

    async def remember(self, sid: str, text: str, project: bool = False) -> NoteRecord:
        """See :meth:`MemoryCommands.remember`."""
        return await self.memory_commands.remember(sid, text, project)

    async def memory(self, sid: str) -> MemoryReport:
        """See :meth:`MemoryCommands.memory`."""
        return await self.memory_commands.memory(sid)

    # -- MCP (paragents.sessions.mcp) ----------------------------------------------------------------
    def mcp_report(self, sid: str | None = None) -> McpReport:
        """See :func:`paragents.sessions.mcp.mcp_report`."""
        return mcp_report(self, sid)

    async def mcp_prompt(self, sid: str, command: str, text: str) -> str:
        """The text of the MCP prompt ``command`` (``mcp__server__prompt``) with arguments from ``text``
        (``/mcp__server__prompt ARGS``). Raises SessionError with one readable message."""
        from paragents.mcp.server import McpServerError

        agent = self.agents.get(sid)
        if agent is None or agent.mcp is None:
            raise SessionError(f"no open session with id {sid}")
        try:
            return await agent.mcp.prompt(command, text)
        except McpServerError as exc:
            raise SessionError(str(exc)) from None

    async def mcp_restart(self, name: str) -> str:
        """Restart the MCP server ``name`` now (``/mcp restart NAME``); return what happened."""
        from paragents.mcp.server import McpServerError

        try:
            return await self.mcp.restart(name)
        except McpServerError as exc:
            raise SessionError(str(exc)) from None

    # -- decisions (paragents.sessions.decisions) -----------------------------------------------------
    async def decide(self, sid: str, text: str) -> DecisionRecord:
        """``/decide TEXT``: record a project-wide decision every session sees in its system prompt."""
        return await self.team.decide(text, f"user@{self.view(sid).name}")

    async def decisions(self, search: str | None = None) -> list[DecisionRecord]:
        """``/decisions [search]``: the project's decisions, oldest first."""
        return await self.team.decisions(search)

    # -- config ---------------------------------------------------------------------------------------
    def set_budget(self, sid: str, level: str, text: str) -> Budget:
        """``/budget LEVEL TEXT``: set or raise a cap; a paused session re-checks (sessions/budgets.py)."""
        return self.budgets.set_budget(sid, level, text)

    def join_group(self, sid: str, group_id: str) -> None:
        """Put a session in a fan-out group: the group's budget (``budgets.group``) counts it."""
        self.budgets.join_group(sid, group_id)

    async def add_session_rules(self, sid: str, rules: list[str]) -> list[str]:
        """Add allow rules for this session (as "allow for this session" does; a fan-out answers for
        every sibling with it); return the session's rules now. SessionError for a malformed rule."""
        from paragents import events as ev
        from paragents.permissions.settings import PolicyError, parse_rules

        view = self.view(sid)
        try:
            parse_rules(list(rules), "allow", "session", None, "session rule")
        except PolicyError as exc:
            raise SessionError(str(exc)) from None
        now = [*view.session_rules, *(r for r in rules if r not in view.session_rules)]
        self.emit(ev.SessionRulesChanged(sid, tuple(now)))
        await self.store.update_session(sid, session_rules=now)
        return now

    def raise_budget(self, sid: str, text: str) -> Budget:
        """Raise the session's own cap to ``text`` (e.g. ``"5usd"``) and resume it when paused."""
        return self.budgets.set_budget(sid, "session", text)

    def allow_one_more(self, sid: str) -> bool:
        """Let a session paused at a budget or the loop guard send one more request."""
        return self.budgets.allow_one_more(sid)

    def stop_paused(self, sid: str) -> bool:
        """End the turn of a session paused at a budget or the loop guard."""
        return self.budgets.stop_paused(sid)

    def config_rows(self) -> list[tuple[str, str, str]]:
        """Return ``(field, redacted value, source)`` rows of the effective config for /show-config."""
        return describe_config(self.loaded)

    async def reload_config(self) -> list[tuple[str, str, str]]:
        """Re-read the config files (after /setup, /reload) with the command line's values still on top,
        rebuild the chat client and apply the new values to open sessions: a session on the old default
        model follows a new default (stored, with a note); one given its own model keeps it. Returns
        ``(field, old, new)`` for every value that changed (secrets redacted, as /show-config shows
        them). Raises ConfigError naming the file and field; the running config is then left as it was."""
        from paragents import events as ev

        loaded = load_config(self.project_dir, self.cli_overrides, self.env)
        cfg = loaded.config
        client = make_client(cfg, self.recorder, self.env)
        before = {name: value for name, value, _source in describe_config(self.loaded, self.env)}
        old_default = self.loaded.config.model
        old = self.client
        self.loaded = loaded
        self.client = client
        self.scheduler.max_parallel = cfg.max_parallel_turns
        for agent in self.agents.values():
            agent.client = client
            agent.config = cfg
        self.conflicts.resources = tuple(cfg.resources)
        await self.mcp.reconfigure(cfg.mcp, [f.path for f in getattr(self.policy, "files", [])])
        for view in list(self.sessions.values()):
            follows = bool(cfg.model) and cfg.model != old_default and view.model == old_default
            if follows and not view.read_only and not view.model.startswith("acp:"):
                await self.set_model(view.id, cfg.model)
                was = old_default or "(none)"
                text = f"model {was} -> {cfg.model}: the default changed (/model {was} switches back)"
                self.emit(ev.Notice(view.id, text))
                continue
            model = view.model or cfg.model
            view.apply(ev.ModelChanged(view.id, model, self.context_window(model)))
        await old.aclose()
        after = describe_config(loaded, self.env)
        return [
            (name, before.get(name, ""), value) for name, value, _src in after if before.get(name) != value
        ]

    async def shutdown(self) -> None:
        """Cancel running turns, mark open sessions idle, give up the sessions held, close the client
        and the store. A store that cannot be written does not stop it (a failing store fails fast)."""
        from paragents import events as ev
        from paragents.models import SessionState
        from paragents.sessions import acp
        from paragents.store import StoreError

        self.drafts.freeze()  # the queues are cleared next: their saved copies stay for next time
        await self.scheduler.shutdown()
        await self.drafts.flushed()
        await self.tool_rows.flushed()
        await self.budgets.saved()  # a /budget just typed is written before the store closes
        await acp.stop_all(self)  # external agents' process groups
        await self.holding.stop()
        if self.lane_watcher is not None:
            await self.lane_watcher.stop()
        await self.remote.shutdown()
        for sid, view in list(self.sessions.items()):
            if view.read_only:
                continue  # another process holds it: its state is not ours to write
            if view.state in BUSY_STATES:
                view.apply(ev.SessionStateChanged(sid, SessionState.IDLE))  # no client listens any more
            with contextlib.suppress(StoreError):
                await self.store.update_session(sid, state=view.state.value)
        for sid in list(self.holds):
            with contextlib.suppress(StoreError):
                await self.store.release_session(sid)
        self.holds.clear()
        await self.mcp.shutdown()
        await self.client.aclose()
        await self.store.close()


def make_client(
    cfg: RuntimeConfig, recorder: Recorder | None = None, env: Mapping[str, str] | None = None
) -> Any:
    """Return the ``ChatClient`` for a ``RuntimeConfig`` (key resolved from ``env``), reporting raw
    responses to ``recorder.on_response`` when a recorder is given. Raises ConfigError (missing key
    env var)."""
    from paragents.llm import ChatClient

    return ChatClient(
        cfg.base_url,
        cfg.resolve_api_key(env),
        connect_timeout=cfg.connect_timeout,
        read_timeout=cfg.read_timeout,
        max_retries=cfg.max_retries,
        max_retry_wait=cfg.max_retry_wait,
        extra_headers=dict(cfg.extra_headers),
        recorder=recorder.on_response if recorder is not None else None,
    )


def _stdin_is_terminal() -> bool:
    """Return True when stdin is a terminal (someone can answer a conflict); False for pipes/closed."""
    try:
        return bool(os.isatty(0))
    except (OSError, ValueError):
        return False


__all__ = [
    "ACTIVE_RECORDER",
    "MODE_NAMES",
    "ConfigError",
    "Recorder",
    "Runtime",
    "SessionError",
    "SessionView",
]


def _satisfies_api(runtime: Runtime) -> SessionsAPI:
    """mypy's check that :class:`Runtime` offers everything :class:`SessionsAPI` promises."""
    return runtime
