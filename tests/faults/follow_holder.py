"""Child process of the read-only follow tests: a real Runtime that holds sessions and runs turns.

Usage: python follow_holder.py PROJECT DB_PATH BASE_URL NAME [COUNT]
Opens COUNT (default 1) new sessions NAME, NAME-2, ... and prints "held ID[,ID...]". Then reads
lines on stdin: "prompt TEXT" runs a turn of the first session and prints "done" when it ended;
"clear" starts a new conversation in it (``/clear``) and prints "done"; "quit"
or the end of input shuts the Runtime down (the sessions are released) and exits.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from paragents.sessions.runtime import Runtime


async def main(project: Path, db: Path, url: str, name: str, count: int) -> None:
    cfg = {"base_url": url, "model": "m", "max_retries": 0, "sandbox": "off"}
    rt = await Runtime.create(project, cli_overrides=cfg, db_path=db)
    rt.set_sink(lambda event: None)
    views = [await rt.lifecycle.new_session(name if i == 0 else f"{name}-{i + 1}") for i in range(count)]
    print("held " + ",".join(v.id for v in views), flush=True)
    while True:
        line = (await asyncio.to_thread(sys.stdin.readline)).strip()
        if not line or line == "quit":
            break
        if line.startswith("prompt "):
            rt.submit(views[0].id, line.removeprefix("prompt "))
            await rt.wait_idle(views[0].id)
            print("done", flush=True)
        elif line == "clear":
            await rt.lifecycle.clear_session(views[0].id)
            print("done", flush=True)
    await rt.shutdown()


if __name__ == "__main__":
    argv = sys.argv[1:]
    asyncio.run(main(Path(argv[0]), Path(argv[1]), argv[2], argv[3], int(argv[4]) if len(argv) > 4 else 1))
