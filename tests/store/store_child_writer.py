"""Child process of the kill test: appends messages in a loop, printing each id once it is stored.

Usage: python store_child_writer.py DB_PATH SESSION_ID PREFIX MAX_COUNT
Prints "ready" after opening, then one id per line (flushed) after each append_message returns.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from paragents.store import Store


async def main(db: Path, session_id: str, prefix: str, count: int) -> None:
    store = await Store.open(db)
    print("ready", flush=True)
    for i in range(count):
        msg_id = await store.messages.append(session_id, {"role": "user", "content": f"{prefix}-{i}"})
        print(msg_id, flush=True)
    await store.close()


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])))
