"""The commands: ``paragents pair`` in another process makes a link the running server accepts once;
``paragents serve`` on a non-loopback address without credentials exits 2 before opening anything;
old access rows are pruned."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time

from tests.serve.cli_process import paragents
from tests.serve.conftest import Served


async def test_paragents_pair_from_another_process_makes_a_one_time_link(served: Served) -> None:
    served.clock.now = time.time()  # the other process stamps the code with the real clock
    done = await asyncio.to_thread(paragents, "pair", "--url", served.url)
    assert done.returncode == 0, done.stderr
    link = next(line for line in done.stdout.splitlines() if "/pair/" in line)
    assert link.startswith(served.url + "/pair/") and "works once, for 5 minutes" in done.stdout
    assert "█" in done.stdout and "\x1b" not in done.stdout
    code = link.rsplit("/", 1)[1]
    assert (await served.client.post("/pair", json={"code": code})).status_code == 200
    assert (await served.client.post("/pair", json={"code": code})).status_code == 410


def test_serve_refuses_a_public_address_without_credentials(tmp_path: object) -> None:
    done = paragents("serve", "--host", "0.0.0.0", "--port", "0", env={"PARAGENTS_SERVE_KEY": ""})
    assert done.returncode == 2
    assert "refusing to listen on 0.0.0.0 without authentication" in done.stderr


async def test_old_access_rows_are_pruned(served: Served) -> None:
    store = served.runtime.store
    await store.api_access.record(remote="1.2.3.4", method="GET", path="/old", status=200, at=1000.0)
    await store.api_access.record(remote="1.2.3.4", method="GET", path="/new", status=200, at=5000.0)
    assert await store.api_access.prune(2000.0) == 1
    assert [r["path"] for r in await store.api_access.recent()] == ["/new"]


def test_pair_with_no_server_running_says_so_instead_of_printing_a_dead_link() -> None:
    from paragents.serve.pairing import info_path

    done = paragents("pair")
    info_path().parent.mkdir(parents=True, exist_ok=True)
    assert done.returncode == 1 and "/pair/" not in done.stdout
    assert "no paragents serve is running" in done.stderr and "--url" in done.stderr
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    info_path().write_text(f'{{"url": "http://127.0.0.1:9", "pid": {int(gone.stdout)}}}')
    done = paragents("pair")  # a serve.json left by a server that is gone
    assert done.returncode == 1 and "no paragents serve is running" in done.stderr
    info_path().write_text(f'{{"url": "http://127.0.0.1:9", "pid": {os.getpid()}}}')
    done = paragents("pair")  # a live server's
    assert done.returncode == 0, done.stderr
    assert "http://127.0.0.1:9/pair/" in done.stdout


def test_a_second_server_does_not_take_over_a_live_servers_serve_json() -> None:
    from paragents.serve.pairing import claim_info, info_path

    info_path().parent.mkdir(parents=True, exist_ok=True)
    other = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        info_path().write_text(f'{{"url": "http://127.0.0.1:1111", "pid": {other.pid}}}')
        assert claim_info("http://127.0.0.1:2222", "k") is None
        assert "1111" in info_path().read_text()
    finally:
        other.communicate(b"", timeout=60)
    assert claim_info("http://127.0.0.1:2222", None) == info_path()  # its process is gone now
    assert "2222" in info_path().read_text()
