"""The runtime: the composition root of the session layer (built by
:func:`paragents.sessions.factory.open_sessions`; tests build it with :meth:`Runtime.create`).

It builds the session layer's parts on the shared state (:class:`~paragents.sessions.core.SessionsCore`:
config, store, policy, chat client, scheduler, one agent per open session) and **assigns** each facet
of :class:`~paragents.sessions.api.SessionsAPI` to the component that implements it (``self.lanes =
LaneCommands(self)``): no command is written here a second time. Clients call the facets' methods
("attributes down") and receive every core event through the one sink set with ``set_sink``
("messages up"). Nothing here imports Textual.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from paragents import events as ev
from paragents import paths
from paragents.config import ConfigError, LoadedConfig, MissingKeyError, load_config, require_trusted_files
from paragents.conflicts import UNATTENDED_WAIT
from paragents.llm import ChatClient
from paragents.llm.recording import ACTIVE_RECORDER, Recorder
from paragents.models import SessionState
from paragents.permissions import Policy
from paragents.sessions import acp, approvals
from paragents.sessions.api import SessionsAPI
from paragents.sessions.approvals import ApprovalCommands
from paragents.sessions.controls import MODE_NAMES, SessionControls
from paragents.sessions.core import SessionsCore
from paragents.sessions.holds import BUSY_STATES, SessionHolds
from paragents.sessions.lane_commands import LaneCommands
from paragents.sessions.lifecycle import SessionLifecycle
from paragents.sessions.mcp import McpCommands
from paragents.sessions.memory import MemoryCommands
from paragents.sessions.opening import SessionOpening
from paragents.sessions.prompts import PromptCommands
from paragents.sessions.reservations import ReservationCommands
from paragents.sessions.settings import SettingsCommands, make_client
from paragents.sessions.view import SessionError, SessionView
from paragents.store import Store, StoreError
from paragents.trust import PERMISSION_FILES


class Runtime(SessionsCore):
    """The session layer for one project directory. Build it with :meth:`create`."""

    def __init__(
        self, project_dir: Path, loaded: LoadedConfig, store: Store, policy: Policy, client: ChatClient
    ) -> None:
        super().__init__(project_dir, loaded, store, policy, client)
        self.holding = SessionHolds(self)
        self.opening = SessionOpening(self, self.holding)
        self.controls = SessionControls(self)
        self.lifecycle = SessionLifecycle(self, self.opening, self.holding, self.controls)
        self.prompts = PromptCommands(self)
        self.lanes = LaneCommands(self)
        self.approvals = ApprovalCommands(self)
        self.memory = MemoryCommands(self)
        self.mcp = McpCommands(self)
        self.settings = SettingsCommands(self, self.controls)
        self.reservations = ReservationCommands(self)
        # self.budgets (BudgetCommands) is made by SessionsCore: the agents' meters use it

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
        unattended_wait: float | None = None,
    ) -> Runtime:
        """Load config and policy for ``project_dir``, open the store, build the chat client.

        ``cli_overrides`` are config values from the command line; ``cli_rules`` permission rules from
        ``--allow/--ask/--deny``. Raises ConfigError (bad config or missing key env var) or
        PolicyError (unreadable permission files: the runtime fails closed). ``recorder`` (default:
        :data:`ACTIVE_RECORDER`) receives every raw response and is attached to the runtime.
        ``keyless_ok`` (the TUI): an ``api_key_env`` that is not set does not raise; the client goes
        without a key and ``key_problem`` says why (the TUI opens /setup with it). ``unattended_wait``:
        the seconds a call waits on a conflict nobody can answer when none is set (``paragents acp``)."""
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
        if unattended_wait is not None and not runtime.conflicts.unattended_wait:
            runtime.conflicts.unattended_wait = unattended_wait
        runtime.notes.extend(await store.turns.recover_interrupted(os.getpid()))
        runtime.notes.extend(await approvals.close_orphan_conflicts(runtime))
        return runtime

    async def shutdown(self) -> None:
        """Cancel running turns, mark open sessions idle, give up the sessions held, close the client
        and the store. A store that cannot be written does not stop it (a failing store fails fast)."""
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
                await self.store.sessions.update(sid, state=view.state.value)
        for sid in list(self.holds):
            with contextlib.suppress(StoreError):
                await self.store.holders.release(sid)
        self.holds.clear()
        await self.mcp_pool.shutdown()
        await self.client.aclose()
        await self.store.close()


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
    "make_client",
]


def _satisfies_api(runtime: Runtime) -> SessionsAPI:
    """mypy's check that :class:`Runtime` offers everything :class:`SessionsAPI` promises."""
    return runtime
