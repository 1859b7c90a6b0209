"""Several writers on one file: concurrent stores, and a writer process SIGKILLed mid-append."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

from paragents.models import user_message
from paragents.store import SessionRecord, Store

CHILD = Path(__file__).with_name("store_child_writer.py")


async def test_two_stores_appending_concurrently_lose_nothing(db_file: Path, project: Path) -> None:
    first, second = await asyncio.gather(Store.open(db_file), Store.open(db_file))
    try:
        a = await first.sessions.create(name="a", project_dir=project, workdir=project, model="m")
        b = await second.sessions.create(name="b", project_dir=project, workdir=project, model="m")

        async def writer(store: Store, session: SessionRecord, label: str) -> list[int]:
            return [await store.messages.append(session.id, user_message(f"{label}-{i}")) for i in range(200)]

        ids_a, ids_b, ids_shared = await asyncio.gather(
            writer(first, a, "a"), writer(second, b, "b"), writer(second, a, "a2")
        )
    finally:
        await first.close()
        await second.close()
    assert len(set(ids_a) | set(ids_b) | set(ids_shared)) == 600
    async with await Store.open(db_file) as store:
        texts_a = [m.message["content"] for m in await store.messages.load(a.id)]
        texts_b = [m.message["content"] for m in await store.messages.load(b.id)]
    assert sorted(texts_a) == sorted([f"a-{i}" for i in range(200)] + [f"a2-{i}" for i in range(200)])
    assert [t for t in texts_a if t.startswith("a-")] == [f"a-{i}" for i in range(200)]
    assert texts_b == [f"b-{i}" for i in range(200)]


async def test_one_store_shared_by_many_coroutines(store: Store, session: SessionRecord) -> None:
    async def burst(label: str) -> None:
        for i in range(50):
            await store.messages.append(session.id, user_message(f"{label}{i}"))
            if i % 10 == 0:
                await store.messages.load_history(session.id)

    await asyncio.gather(*(burst(c) for c in "abcd"))
    assert await store.messages.count(session.id) == 200


def _kill_child_at_random_point(db_file: Path, session_id: str, prefix: str, stop_after: int) -> set[int]:
    """Run the writer child, SIGKILL it once it has reported ``stop_after`` ids, and return every id
    it reported (including lines already written when the kill landed)."""
    proc = subprocess.Popen(
        [sys.executable, str(CHILD), str(db_file), session_id, prefix, "100000"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == "ready"
        reported = [int(proc.stdout.readline()) for _ in range(stop_after)]
        os.kill(proc.pid, signal.SIGKILL)
        rest = proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    reported += [int(line) for line in rest.split() if line.strip()]
    return set(reported)


def test_sigkilled_writer_loses_no_reported_message(db_file: Path, project: Path) -> None:
    async def make_session() -> str:
        async with await Store.open(db_file) as store:
            made = await store.sessions.create(name="k", project_dir=project, workdir=project, model="m")
            return made.id

    session_id = asyncio.run(make_session())
    rng = random.Random(20240601)
    reported_all: set[int] = set()
    for round_no in range(5):
        reported = _kill_child_at_random_point(db_file, session_id, f"r{round_no}", rng.randint(1, 80))
        reported_all |= reported

        async def check() -> tuple[str | None, dict[int, str]]:
            async with await Store.open(db_file) as store:
                stored = await store.messages.load(session_id)
                return store.recovery_note, {m.id: m.message["content"] for m in stored}

        note, stored = asyncio.run(check())
        assert note is None
        assert reported_all <= set(stored), f"round {round_no}: lost {sorted(reported_all - set(stored))}"
        assert all(stored[i].startswith(f"r{round_no}-") for i in reported)
