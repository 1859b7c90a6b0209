"""MCP test fixtures: the engine's Runtime-against-a-replay-server fixture, the demo server's command
line (a real stdio subprocess), and the demo server over Streamable HTTP in this process on
127.0.0.1:0 (uvicorn on a socket bound before it starts, so there is no start-up race)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.patience import HANG_GUARD_S
from tests.runtime_env import Collector, Env, env  # noqa: F401  (the fixture, reused)

DEMO = Path(__file__).with_name("demo_server.py")


def demo_stdio(**extra: object) -> dict[str, object]:
    """A server entry running the demo server as a stdio subprocess (its startupTimeout a hang guard:
    it starts in ~2 s at load 17 on 2 cores, but a test must not fail for a slow start)."""
    return {"command": sys.executable, "args": [str(DEMO)], "startupTimeout": HANG_GUARD_S, **extra}


@contextlib.asynccontextmanager
async def http_demo(name: str = "web") -> AsyncIterator[str]:
    """Serve the demo server over Streamable HTTP in this process; yield its URL."""
    import uvicorn

    from tests.mcp.demo_server import build

    app = build(name).streamable_http_app()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, HANG_GUARD_S)
        sock.close()


@pytest.fixture
async def http_url() -> AsyncIterator[str]:
    async with http_demo() as url:
        yield url


__all__ = ["DEMO", "Collector", "Env", "demo_stdio", "http_demo"]
