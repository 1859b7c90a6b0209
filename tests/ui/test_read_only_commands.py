"""A session another live process holds (shown read-only here) is changed by no command of this
window: /rename, /model, /mode, /sandbox, /clear, /budget session, /remember and /compact are refused
with the holder and /takeover named, and the store's row is unchanged (a fresh tester renamed, switched
the model of and cleared a session a `paragents run` was running: its turn then lost its reply). One
writer per session: the refusal is the core's (``SessionsCore.writable``), so every client gets it."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from paragents.llm.replay import ReplayServer
from paragents.sessions.view import SessionError
from paragents.ui.app import make_app
from paragents.ui.widgets.transcript import TextEntry
from tests.ui.conftest import SIZE, wait_until
from tests.ui.helpers import started


async def test_no_command_changes_a_session_another_process_holds(
    make_runtime: Any, replay: ReplayServer
) -> None:
    runtime = await make_runtime()
    view = await runtime.lifecycle.new_session("held")
    holder = subprocess.Popen(["sleep", "600"])  # a live process holding the session
    try:
        await runtime.store.holders.acquire(view.id, take_over=True, pid=holder.pid)
        runtime.holds.clear()
        await runtime.shutdown()
        reader = await make_runtime()
        (held,) = await reader.opening.restore()
        assert held.read_only
        before = await reader.store.sessions.get(held.id)
        commands = {
            "/rename": lambda: reader.controls.rename_session(held.id, "renamed"),
            "/model": lambda: reader.controls.set_model(held.id, "other-model"),
            "/mode": lambda: reader.controls.set_mode(held.id, "acceptEdits"),
            "/clear": lambda: reader.lifecycle.clear_session(held.id),
            "/remember": lambda: reader.memory.remember(held.id, "a note"),
            "/compact": lambda: reader.memory.compact(held.id),
        }
        for name, command in commands.items():
            with pytest.raises(SessionError) as refused:
                await command()
            assert str(holder.pid) in str(refused.value) and "/takeover" in str(refused.value), name
        for name, sync_command in {
            "/sandbox": lambda: reader.controls.set_sandbox(held.id, "off"),
            "/budget session": lambda: reader.budgets.set_budget(held.id, "session", "5usd"),
        }.items():
            with pytest.raises(SessionError):
                sync_command()
            assert held.read_only, name
        after = await reader.store.sessions.get(held.id)
        assert (after.name, after.model, after.mode) == (before.name, before.model, before.mode)
        assert (held.name, held.model, held.mode, held.sandbox_mode, held.budget) == (
            before.name, before.model, before.mode, None, None
        )  # fmt: skip
        assert reader.budgets.caps(held.id)["session"] is None
        await reader.shutdown()

        app = make_app(await make_runtime())
        async with app.run_test(size=SIZE) as pilot:
            (panel,) = await started(pilot, app)
            await pilot.press(*"/rename renamed", "enter")

            def said() -> list[str]:
                return [e.text for e in panel.transcript.records if isinstance(e, TextEntry)]

            await wait_until(pilot, lambda: any("/takeover" in n for n in said()), "the refusal")
            assert panel.view.name == "held"
            await app.shutdown_runtime()
    finally:
        holder.kill()
        holder.wait()
