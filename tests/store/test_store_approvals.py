"""The ``approvals`` table: one answer per row, refusals naming the first, waking the waiter in-process
and from another process (a real subprocess on the same SQLite file), expiry, orphans of a crash."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from paragents.store import SessionRecord, Store


async def _ask(store: Store, session: SessionRecord, rid: str = "r1", **kw: object) -> None:
    await store.approvals.add(
        rid,
        session.id,
        kind="approval",
        tool="run_command",
        summary="run_command npm test",
        call={"id": "c1", "name": "run_command", "arguments": '{"command": "npm test"}'},
        reason="no rule allows it",
        rules=("Bash(npm test)",),
        **kw,  # type: ignore[arg-type]
    )


async def test_an_answer_is_taken_once_and_a_second_is_refused_naming_the_first(
    store: Store, session: SessionRecord
) -> None:
    await _ask(store, session)
    first = await store.approvals.answer("r1", "allow_once", "cli (pid 1)")
    second = await store.approvals.answer("r1", "reject_with_note", "user", "no")
    assert first.accepted and first.approval is not None and first.approval.state == "answered"
    assert second.status == "already_answered" and not second.accepted
    assert "allow_once by cli (pid 1)" in second.message
    row = await store.approvals.get("r1")
    assert row is not None and row.answer == "allow_once" and row.answered_by == "cli (pid 1)"
    assert row.note is None


async def test_unknown_invalid_and_conflict_answers(store: Store, session: SessionRecord) -> None:
    await _ask(store, session)
    assert (await store.approvals.answer("nope", "allow_once", "cli")).status == "unknown"
    assert (await store.approvals.answer("r1", "run_anyway", "cli")).status == "invalid"
    await store.approvals.add(
        "k1", session.id, kind="conflict", tool="edit_file", summary="edit a.py", choices=("wait", "skip")
    )
    assert (await store.approvals.answer("k1", "reread", "cli")).status == "invalid"
    assert (await store.approvals.answer("k1", "skip", "cli")).accepted


async def test_an_expired_row_refuses_answers(store: Store, session: SessionRecord) -> None:
    await _ask(store, session, expires_in=-1.0)
    result = await store.approvals.answer("r1", "allow_once", "cli")
    assert result.status == "expired"
    assert (await store.approvals.wait("r1")).state == "expired"


async def test_an_answer_through_the_same_store_wakes_the_waiter_at_once(
    store: Store, session: SessionRecord
) -> None:
    await _ask(store, session)
    waiter = asyncio.ensure_future(store.approvals.wait("r1", poll=3600))  # no poll would come in time
    await asyncio.sleep(0)
    assert not waiter.done()
    await store.approvals.answer("r1", "allow_session", "user")
    row = await asyncio.wait_for(waiter, 5)
    assert row.answer == "allow_session"


async def test_an_answer_from_another_process_reaches_the_waiter(
    store: Store, session: SessionRecord, db_file: Path
) -> None:
    await _ask(store, session)
    waiter = asyncio.ensure_future(store.approvals.wait("r1", poll=0.05))
    script = textwrap.dedent(
        f"""
        import asyncio
        from paragents.store import Store

        async def main():
            store = await Store.open({str(db_file)!r})
            result = await store.approvals.answer("r1", "reject_with_note", "child", "use make test")
            print(result.status)
            await store.close()

        asyncio.run(main())
        """
    )
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = await child.communicate()
    assert child.returncode == 0, err.decode()
    assert out.decode().strip() == "accepted"
    row = await asyncio.wait_for(waiter, 10)
    assert (row.answer, row.answered_by, row.note) == ("reject_with_note", "child", "use make test")


async def test_rows_of_a_dead_process_are_orphans_and_close_with_a_note(
    store: Store, session: SessionRecord
) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True)
    await _ask(store, session, pid=int(dead.stdout))
    await _ask(store, session, rid="mine")
    orphans = await store.approvals.orphaned()
    assert [o.id for o in orphans] == ["r1"] and orphans[0].waiter_gone()
    assert await store.approvals.close("r1", "its turn cannot continue")
    assert not await store.approvals.close("r1", "twice")
    refused = await store.approvals.answer("r1", "allow_once", "cli")
    assert refused.status == "closed" and "its turn cannot continue" in refused.message
    assert [r.id for r in await store.approvals.find()] == ["mine"]


@pytest.mark.parametrize("state", ["answered", "closed"])
async def test_listing_by_state(store: Store, session: SessionRecord, state: str) -> None:
    await _ask(store, session)
    if state == "answered":
        await store.approvals.answer("r1", "allow_once", "cli")
    else:
        await store.approvals.close("r1", "cancelled")
    assert await store.approvals.find() == []
    assert [r.state for r in await store.approvals.find(state=None)] == [state]
