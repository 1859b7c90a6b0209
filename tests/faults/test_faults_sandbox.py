"""Sandbox escapes tried: commands that a confined ``run_command`` must not get away with (real
bubblewrap). Each attempt is one row of the fault table: "recovered" means the escape failed and the
command's result says so; a successful escape fails the test."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from paragents.tools import ToolContext, default_registry
from paragents.tools.sandbox import SandboxConfig, check
from tests.faults.tally import record

BWRAP_WORKS = shutil.which("bwrap") is not None and check(SandboxConfig()).active
pytestmark = pytest.mark.skipif(
    not BWRAP_WORKS, reason="bwrap (Debian package bubblewrap) is not installed or cannot run here"
)


@pytest.fixture
def outside() -> Iterator[Path]:
    """A writable directory outside the workdir and outside /tmp (which the sandbox replaces)."""
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="paragents-escape-") as name:
        yield Path(name)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    work = tmp_path / "work"
    work.mkdir()
    context = ToolContext(workdir=work, session_id="escape")
    context.sandbox = SandboxConfig(mode="required")
    return context


async def run(ctx: ToolContext, command: str) -> str:
    tool = default_registry().get("run_command")
    assert tool is not None
    result = await tool.run(tool.validate({"command": command, "timeout": 30}), ctx)
    assert result.meta.get("sandboxed") is True, result.content
    return result.content


async def test_escape_by_symlink_in_the_workdir(ctx: ToolContext, outside: Path) -> None:
    (ctx.workdir / "link").symlink_to(outside)
    out = await run(ctx, "echo pwned > link/f.txt")
    escaped = (outside / "f.txt").exists()
    record("sandbox escape: write through a symlink out of the workdir", recovered=not escaped)
    assert not escaped, out


async def test_escape_by_remounting_root_read_write(ctx: ToolContext) -> None:
    marker = Path(f"/etc/paragents-escape-{os.getpid()}")
    out = await run(ctx, f"mount -o remount,rw / 2>&1; echo pwned > {marker}")
    escaped = marker.exists()
    if escaped:
        marker.unlink()
    record("sandbox escape: remount / read-write and write /etc", recovered=not escaped)
    assert not escaped, out


async def test_escape_by_writing_the_parent_of_the_workdir(ctx: ToolContext) -> None:
    out = await run(ctx, "echo pwned > ../sibling.txt; cd .. && touch other.txt")
    escaped = (ctx.workdir.parent / "sibling.txt").exists() or (ctx.workdir.parent / "other.txt").exists()
    record("sandbox escape: write next to the workdir", recovered=not escaped)
    assert not escaped, out


async def test_escape_by_reading_a_denied_path(ctx: ToolContext) -> None:
    (ctx.workdir / ".env").write_text("API_KEY=sk-secret-abcd\n")
    ctx.sandbox = SandboxConfig(mode="required", hidden_rules=((str(ctx.workdir), ".env"),))
    out = await run(ctx, "cat .env; cp .env copy.txt 2>&1; cat copy.txt")
    leaked = "sk-secret" in out or "sk-secret" in (ctx.workdir / "copy.txt").read_text(errors="replace")
    record("sandbox escape: read a path a Read() deny rule hides", recovered=not leaked)
    assert not leaked, out


async def test_escape_by_reaching_a_host_loopback_server(ctx: ToolContext) -> None:
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"reached")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        code = (
            "import urllib.request; "
            f"print(urllib.request.urlopen('http://127.0.0.1:{port}/x', timeout=3).read())"
        )
        out = await run(ctx, f'python3 -c "{code}" 2>&1 | tail -1')
    finally:
        server.shutdown()
        server.server_close()
    record("sandbox escape: reach a host loopback server with the network off", recovered=not hits)
    assert not hits and "reached" not in out, out


async def test_escape_by_leaving_a_process_behind(ctx: ToolContext, outside: Path) -> None:
    marker = outside / "late.txt"
    ctx.sandbox = SandboxConfig(mode="required", writable=(str(outside),))
    await run(ctx, f"(sleep 2; echo late > {marker}) & echo started")
    # The sandbox's PID namespace ends with the command: the background job must be gone. Wait
    # for it to have had its chance (a bounded poll on the file, not a sleep as synchronisation).
    survivor = await _exists_within(marker, seconds=4.0)
    record("sandbox escape: a background process outliving the command", recovered=not survivor)
    assert not survivor


async def _exists_within(path: Path, seconds: float) -> bool:
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while loop.time() < deadline:
        if path.exists():
            return True
        await asyncio.sleep(0.1)
    return path.exists()
