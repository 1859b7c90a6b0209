"""The commands: ``paragents pair`` in another process makes a link the running server accepts once;
``paragents serve`` on a non-loopback address without credentials exits 2 before opening anything;
old access rows are pruned."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time

from tests.serve.conftest import Served


def paragents(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "paragents.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


async def test_paragents_pair_from_another_process_makes_a_one_time_link(served: Served) -> None:
    served.clock.now = time.time()  # the other process stamps the code with the real clock
    done = await asyncio.to_thread(paragents, "pair", "--url", served.url)
    assert done.returncode == 0, done.stderr
    link = next(line for line in done.stdout.splitlines() if "/pair/" in line)
    assert link.startswith(served.url + "/pair/") and "works once, for 5 minutes" in done.stdout
    assert "█" in done.stdout and "\x1b" not in done.stdout
    path = link[len(served.url) :]
    assert (await served.client.get(path)).status_code == 303
    assert (await served.client.get(path)).status_code == 410


def test_serve_refuses_a_public_address_without_credentials(tmp_path: object) -> None:
    done = paragents("serve", "--host", "0.0.0.0", "--port", "0", env={"PARAGENTS_SERVE_KEY": ""})
    assert done.returncode == 2
    assert "refusing to listen on 0.0.0.0 without authentication" in done.stderr


async def test_old_access_rows_are_pruned(served: Served) -> None:
    store = served.runtime.store
    await store.record_access(remote="1.2.3.4", method="GET", path="/old", status=200, at=1000.0)
    await store.record_access(remote="1.2.3.4", method="GET", path="/new", status=200, at=5000.0)
    assert await store.prune_access(2000.0) == 1
    assert [r["path"] for r in await store.recent_access()] == ["/new"]
