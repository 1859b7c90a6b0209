"""Child process of the holder tests: takes a session (one writer per session) and keeps it.

Usage: python store_child_holder.py DB_PATH SESSION_ID
Prints "held" once it holds the session, then waits for a line on stdin: "release" gives the session
up and exits; end of input exits without releasing (like a crash, but the test kills it for that).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from paragents.store import Store


async def main(db: Path, session_id: str) -> None:
    store = await Store.open(db)
    await store.holders.acquire(session_id)
    print("held", flush=True)
    line = await asyncio.to_thread(sys.stdin.readline)
    if line.strip() == "release":
        await store.holders.release(session_id)
    await store.close()


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2]))
