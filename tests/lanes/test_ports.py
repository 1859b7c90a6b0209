"""Port blocks: allocated in one store transaction, never shared, also across two processes."""

from __future__ import annotations

import asyncio
import itertools
import subprocess
import sys
from pathlib import Path

from paragents.lanes import lane_env
from paragents.store import Store

RESERVE = """
import asyncio, sys
from pathlib import Path
from paragents.store import Store

async def main(db, who, count):
    store = await Store.open(Path(db))
    try:
        for i in range(count):
            await store.lanes.reserve(repo="/r", name=f"{who}-{i}", path=f"/lanes/{who}-{i}",
                                     branch=f"paragents/{who}-{i}", base_ref="main", base_commit="c")
    finally:
        await store.close()

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


async def test_two_processes_racing_get_distinct_port_blocks(tmp_path: Path) -> None:
    db = tmp_path / "state" / "paragents.db"
    await (await Store.open(db)).close()  # create and migrate first, so both racers start equal
    procs = [
        subprocess.Popen([sys.executable, "-c", RESERVE, str(db), who, "15"], cwd=Path.cwd())
        for who in ("a", "b")
    ]
    codes = await asyncio.gather(*(asyncio.to_thread(p.wait) for p in procs))
    assert codes == [0, 0]
    store = await Store.open(db)
    try:
        lanes = await store.lanes.all()
    finally:
        await store.close()
    bases = [lane.port_base for lane in lanes]
    assert len(lanes) == 30 and len(set(bases)) == 30
    assert all(b % 10 == 0 for b in bases)
    spans = sorted(bases)
    assert all(later - earlier >= 10 for earlier, later in itertools.pairwise(spans))


async def test_a_freed_block_is_reused_and_exported(store: Store) -> None:
    first = await store.lanes.reserve(
        repo="/r", name="a", path="/l/a", branch="paragents/a", base_ref="main", base_commit="c"
    )
    second = await store.lanes.reserve(
        repo="/r", name="b", path="/l/b", branch="paragents/b", base_ref="main", base_commit="c"
    )
    assert second.port_base == first.port_base + 10
    await store.lanes.delete(first.id)
    third = await store.lanes.reserve(
        repo="/r", name="c", path="/l/c", branch="paragents/c", base_ref="main", base_commit="c"
    )
    assert third.port_base == first.port_base
    env = lane_env(third)
    assert env["PARAGENTS_PORT"] == env["PORT"] == str(third.port_base)
