"""A session shown read-only follows its holder (one writer per session): a real ``paragents run``
process holds the session and runs a turn against the loopback replay server while a Runtime in this
process shows it read-only; the reply that process writes reaches the reader's view (as the events
the holder emitted), its state and usage follow, the view says the session is free once the holder
exits, and the reader wrote nothing to the store meanwhile."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from paragents import events as ev
from paragents import paths
from paragents.llm.replay import ScriptedResponse, ThreadedReplayServer
from paragents.models import SessionState
from paragents.sessions.runtime import Runtime
from paragents.store import Store
from paragents.ui.app import make_app
from paragents.ui.widgets.transcript import AssistantEntry, TextEntry
from tests.faults.tally import record
from tests.faults.test_faults_holders import SESSION, WAIT, run
from tests.runtime_env import Collector
from tests.ui.conftest import SIZE, wait_until


async def session_id(project: Path) -> str:
    async with await Store.open(paths.db_path()) as store:
        rec = await store.sessions.find(project, SESSION)
        assert rec is not None
        return rec.id


async def test_a_read_only_view_follows_the_holders_turn_and_says_when_it_is_free(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    followed = False
    with ThreadedReplayServer(models=["m"]) as server:
        url = server.base_url
        server.add(ScriptedResponse.from_message("created"), session=SESSION)
        created = run(url, project, "create")
        _out, err = await asyncio.to_thread(created.communicate, timeout=WAIT)
        assert created.returncode == 0, err
        sid = await session_id(project)
        hit, release = threading.Event(), threading.Event()

        async def gate(i: int) -> None:
            if i == 1:
                hit.set()
                await asyncio.to_thread(release.wait, WAIT)  # until the reader shows the session

        held = ScriptedResponse.from_message("the holder's new reply", chunk_size=4)
        held.before_read = gate
        server.add(held, session=SESSION)
        holder = run(url, project, "long prompt")
        reader: Runtime | None = None
        try:
            assert await asyncio.to_thread(hit.wait, WAIT), "the holder never reached the stream"
            reader = await Runtime.create(
                project,
                cli_overrides={"base_url": url, "model": "m", "max_retries": 0},
                db_path=paths.db_path(),
            )
            sink = Collector()
            reader.set_sink(sink)
            view = await reader.lifecycle.reopen_session(sid)
            assert view.read_only and f"pid {holder.pid}" in view.read_only
            assert view.state == SessionState.RUNNING
            usage_before = view.usage
            assert not any(m.get("content") == "the holder's new reply" for m in view.messages)
            written = reader.store.changes.total_changes

            release.set()
            await sink.wait_for(
                lambda: any(m.get("content") == "the holder's new reply" for m in view.messages)
            )
            added = [e.message for e in sink.of(ev.MessageAdded, sid)]
            assert [m.get("content") for m in added] == ["the holder's new reply"]
            _out, err = await asyncio.to_thread(holder.communicate, timeout=WAIT)
            assert holder.returncode == 0, err

            await sink.wait_for(lambda: "is free now" in (view.read_only or ""))
            assert any("is free now" in e.text for e in sink.of(ev.Notice, sid))
            assert view.state == SessionState.IDLE
            async with await Store.open(paths.db_path()) as store:
                rec = await store.sessions.get(sid)
            assert rec is not None and view.usage == rec.usage != usage_before
            assert reader.store.changes.total_changes == written  # the reader wrote nothing
            followed = True

            # the session is free: /takeover makes this window its writer, with nothing shown twice
            await reader.lifecycle.take_over(sid)
            assert view.read_only is None
            replies = [m for m in view.messages if m.get("content") == "the holder's new reply"]
            assert len(replies) == 1
        finally:
            release.set()
            if holder.poll() is None:
                holder.kill()
                await asyncio.to_thread(holder.communicate, timeout=WAIT)
            if reader is not None:
                await reader.shutdown()
    record("read-only view follows its holder's turn", recovered=followed)


HOLDER = Path(__file__).with_name("follow_holder.py")


def start_holder(
    project: Path, url: str, name: str, count: int = 1
) -> tuple[subprocess.Popen[str], list[str]]:
    """A child process whose Runtime holds ``count`` new sessions (tests/faults/follow_holder.py)."""
    proc = subprocess.Popen(
        [sys.executable, str(HOLDER), str(project), str(paths.db_path()), url, name, str(count)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}, cwd=project,
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    assert line.startswith("held "), (line, proc.stderr and proc.stderr.read())
    return proc, line.removeprefix("held ").split(",")


def say(proc: subprocess.Popen[str], line: str) -> None:
    assert proc.stdin is not None
    proc.stdin.write(line + "\n")
    proc.stdin.flush()


async def test_the_read_only_panel_shows_the_holders_prompt_and_reply_then_that_it_is_free(
    tmp_path: Path,
) -> None:
    """Pilot: the TUI restores a session another live process holds; that process runs a turn; the
    panel's transcript shows its prompt and reply (no UI special case: the view's events), is emptied
    by a ``/clear`` there, then says the session is free once that process exits."""
    project = tmp_path / "proj"
    project.mkdir()
    with ThreadedReplayServer(models=["m"]) as server:
        holder, (sid,) = await asyncio.to_thread(start_holder, project, server.base_url, "held")
        reader: Runtime | None = None
        try:
            reader = await Runtime.create(
                project, cli_overrides={"base_url": server.base_url, "model": "m"}, db_path=paths.db_path()
            )
            app = make_app(reader)
            async with app.run_test(size=SIZE) as pilot:
                await wait_until(pilot, lambda: app.ready and sid in app.panels, "the restored panel")
                panel = app.panels[sid]
                assert panel.view.read_only and f"pid {holder.pid}" in panel.view.read_only
                records: list[Any] = panel.transcript.records
                written = reader.store.changes.total_changes

                server.add(ScriptedResponse.from_message("the holder's reply"), session="held")
                await asyncio.to_thread(say, holder, "prompt a prompt typed in the holder")
                await wait_until(
                    pilot,
                    lambda: any(
                        isinstance(e, AssistantEntry) and e.content == "the holder's reply" for e in records
                    ),
                    "the holder's reply in the reader's panel",
                )
                prompts = [e.text for e in records if isinstance(e, TextEntry) and e.kind == "user"]
                assert prompts == ["a prompt typed in the holder"]

                await asyncio.to_thread(say, holder, "clear")  # /clear in the holder empties this panel
                await wait_until(
                    pilot,
                    lambda: not any(isinstance(e, AssistantEntry) for e in records) and bool(records),
                    "the holder's /clear in the reader's panel",
                )
                assert panel.view.messages == []
                assert [e.text for e in records] == [
                    "New conversation (the previous one stays in the history)."
                ]
                await asyncio.to_thread(say, holder, "quit")
                await asyncio.to_thread(holder.communicate, timeout=WAIT)
                await wait_until(
                    pilot,
                    lambda: any(isinstance(e, TextEntry) and "is free now" in e.text for e in records),
                    "the panel saying the session is free",
                )
                assert reader.store.changes.total_changes == written  # the reader wrote nothing
        finally:
            if holder.poll() is None:
                holder.kill()
                await asyncio.to_thread(holder.communicate, timeout=WAIT)
            if reader is not None:
                await reader.shutdown()
    record("read-only panel follows its holder (pilot)", recovered=True)
